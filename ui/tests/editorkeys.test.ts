// inListItem (src/editorkeys.ts): Tab indents only where every line the
// selection touches is in a Markdown list item.

import { test } from "node:test";
import assert from "node:assert/strict";
import { EditorSelection, EditorState } from "@codemirror/state";
import { markdown } from "@codemirror/lang-markdown";
import { inListItem } from "../src/editorkeys";

const doc = "# Plan\n\nA paragraph.\n\n- first\n  - nested\n- last\n\n> - quoted\n\n1. ordered\n";
const at = (text: string, extra = 0) => doc.indexOf(text) + extra;
const inList = (anchor: number, head = anchor) =>
  inListItem(EditorState.create({ doc, selection: EditorSelection.single(anchor, head), extensions: markdown() }));

test("a cursor in a bullet, nested, quoted or ordered item is in a list", () => {
  assert.equal(inList(at("- first", 4)), true);
  assert.equal(inList(at("- nested")), true);
  assert.equal(inList(at("- last", 6)), true);
  assert.equal(inList(at("- quoted", 3)), true);
  assert.equal(inList(at("1. ordered", 2)), true);
});

test("a heading, a paragraph or a blank line is not", () => {
  assert.equal(inList(at("# Plan", 2)), false);
  assert.equal(inList(at("A paragraph", 3)), false);
  assert.equal(inList(at("\n\n- first", 1)), false);
});

test("a selection is in a list only when all its lines are", () => {
  assert.equal(inList(at("- first"), at("- last", 3)), true);
  assert.equal(inList(at("A paragraph"), at("- first", 3)), false);
});

test("a new, empty item is in a list", () => {
  for (const text of ["- first\n- ", "1. first\n2. ", "- first\n  - "]) {
    const state = EditorState.create({ doc: text, selection: { anchor: text.length }, extensions: markdown() });
    assert.equal(inListItem(state), true, JSON.stringify(text));
  }
});
