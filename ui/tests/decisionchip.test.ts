// keepDecisionLines (src/decisionchip.ts): typing beside a Decision chip
// goes on a line of its own, a change that would join a Decision line to
// its neighbour is not made, and the server's own changes are never
// filtered.

import { test } from "node:test";
import assert from "node:assert/strict";
import { EditorState, type TransactionSpec } from "@codemirror/state";
import { keepDecisionLines } from "../src/decisionchip";

const line = '<Decision id="d1" />';
const doc = `# Plan\n${line}\nnext`;
const from = doc.indexOf(line);
const to = from + line.length;

function apply(spec: TransactionSpec, filter = true): { text: string; cursor: number } {
  const state = EditorState.create({ doc, extensions: keepDecisionLines });
  const tr = state.update({ ...spec, filter });
  return { text: tr.state.doc.toString(), cursor: tr.state.selection.main.head };
}

test("typed after a chip goes on a new line, the cursor after it", () => {
  const r = apply({ changes: { from: to, insert: "x" }, selection: { anchor: to + 1 }, userEvent: "input.type" });
  assert.equal(r.text, `# Plan\n${line}\nx\nnext`);
  assert.equal(r.cursor, to + 2);
});

test("typed before a chip goes on a new line, the cursor still before the break", () => {
  const r = apply({ changes: { from, insert: "ab" }, userEvent: "input.type" });
  assert.equal(r.text, `# Plan\nab\n${line}\nnext`);
  assert.equal(r.cursor, from + 2);
});

test("joining a Decision line to the next or previous line is not made", () => {
  assert.equal(apply({ changes: { from: to, to: to + 1 } }).text, doc); // Backspace at the start of "next"
  assert.equal(apply({ changes: { from: from - 1, to: from } }).text, doc); // Delete at the end of "# Plan"
  assert.equal(apply({ changes: { from: to, to: to + 1, insert: " " } }).text, doc);
});

test("changes elsewhere, and a new line beside the chip, are made as they are", () => {
  assert.equal(apply({ changes: { from: 0, insert: "!" } }).text, "!" + doc);
  assert.equal(apply({ changes: { from: to, insert: "\n" } }).text, `# Plan\n${line}\n\nnext`);
  assert.equal(apply({ changes: { from, insert: "\n" } }).text, `# Plan\n\n${line}\nnext`);
  assert.equal(apply({ changes: { from: doc.length, insert: "\nmore" } }).text, doc + "\nmore");
});

test("the server's changes (not filtered) are never touched", () => {
  assert.equal(apply({ changes: { from: to, to: to + 1 } }, false).text, `# Plan\n${line}next`);
});
