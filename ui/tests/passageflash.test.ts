import { test } from "node:test";
import assert from "node:assert/strict";
import { Text } from "@codemirror/state";
import { passageLines } from "../src/passageflash";

const doc = Text.of([
  "# Plan", // 1
  "", // 2
  "Which store do we use?", // 3
  "It must be durable.", // 4
  "", // 5
  '<Decision id="a" />', // 6
  "", // 7
  '<Decision id="b" />', // 8
  "", // 9
  "Later text.", // 10
]);

test("a linked card marks the block above it, past the call's other cards", () => {
  assert.deepEqual(passageLines(doc, 6, true), { from: 3, to: 4 });
  assert.deepEqual(passageLines(doc, 8, true), { from: 3, to: 4 });
});

test("a card at the end, linked to nothing, marks only its own line", () => {
  assert.deepEqual(passageLines(doc, 8, false), { from: 8, to: 8 });
});

test("a card with nothing above it marks its own line", () => {
  assert.deepEqual(passageLines(Text.of(['<Decision id="a" />']), 1, true), { from: 1, to: 1 });
});
