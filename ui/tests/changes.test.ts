// The Planner's changes (src/workspace/changes.ts): the blocks a text's new
// version added, changed and removed, marks following later edits, and at
// most maxMarks kept.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ChangeSet } from "@codemirror/state";
import { blocksOf, diffBlocks, mapMark, maxMarks, mergeMarks, type ChangeMark } from "../src/workspace/changes";

const marked = (after: string, marks: { kind: string; from: number; to: number }[]) =>
  marks.map((m) => `${m.kind}:${after.slice(m.from, m.to)}`);

test("blocks are runs of lines; a fence stays whole", () => {
  const text = "# A\n\nOne\ntwo\n\n```\nx\n\ny\n```\n\nEnd";
  assert.deepEqual(
    blocksOf(text).map((b) => b.text),
    ["# A", "One\ntwo", "```\nx\n\ny\n```", "End"],
  );
});

test("added, changed and removed blocks", () => {
  const before = "# Plan\n\nKeep.\n\nOld wording.\n\nGone.\n\nLast.";
  const after = "# Plan\n\nKeep.\n\nNew wording.\n\nLast.\n\nA new step.";
  const marks = diffBlocks(before, after);
  assert.deepEqual(marked(after, marks), ["changed:New wording.", "removed:", "added:A new step."]);
  assert.equal(marks[1].from, after.indexOf("Last."));
});

test("a block unlike the one gone is added, not a change of it", () => {
  const before = "# Plan\n\nThis sentence will be revised.\n\nThis line will go.\n";
  const after = "# Plan\n\nThis sentence was revised by the Planner.\n\nA step the Planner added.\n";
  const marks = diffBlocks(before, after);
  assert.deepEqual(marked(after, marks), [
    "changed:This sentence was revised by the Planner.",
    "removed:",
    "added:A step the Planner added.",
  ]);
  assert.equal(marks[1].from, after.indexOf("A step"));
});

test("nothing changed, nothing marked; a block removed at the end", () => {
  assert.deepEqual(diffBlocks("a\n\nb", "a\n\nb"), []);
  const marks = diffBlocks("a\n\nb", "a");
  assert.deepEqual(marks, [{ kind: "removed", from: 1, to: 1 }]);
});

test("marks follow later edits; a changed block deleted becomes removed", () => {
  const mark: ChangeMark = { kind: "changed", from: 5, to: 10, seq: 1 };
  assert.deepEqual(mapMark(mark, ChangeSet.of([{ from: 0, insert: "xx" }], 20)), { ...mark, from: 7, to: 12 });
  assert.deepEqual(mapMark(mark, ChangeSet.of([{ from: 4, to: 11 }], 20)), {
    ...mark,
    kind: "removed",
    from: 4,
    to: 4,
  });
  assert.equal(mapMark({ ...mark, kind: "added" }, ChangeSet.of([{ from: 4, to: 11 }], 20)), null);
});

test("an added block changed again stays added; at most maxMarks kept, the newest", () => {
  const merged = mergeMarks([{ kind: "added", from: 0, to: 5, seq: 1 }], [{ kind: "changed", from: 2, to: 8, seq: 2 }]);
  assert.deepEqual(merged, [{ kind: "added", from: 0, to: 8, seq: 2 }]);
  const many: ChangeMark[] = Array.from({ length: maxMarks + 10 }, (_, i) => ({
    kind: "added",
    from: i * 10,
    to: i * 10 + 5,
    seq: i + 1,
  }));
  const kept = mergeMarks([], many);
  assert.equal(kept.length, maxMarks);
  assert.equal(kept[0].seq, 11);
});
