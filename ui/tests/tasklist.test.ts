// Task lists: "- [ ]" and "- [x]" show as checkboxes, read-only in Chat
// and, in the Plan's Preview, ticked to edit the source at the item's
// exact place (src/tasklist.ts). Sanitising needs a DOM, which Node lacks:
// these tests check the markup before it; the browser walk checks the rest.

import { test } from "node:test";
import assert from "node:assert/strict";
import { chatMarkup, planBlocks, planMarkup, type PlanBlock } from "../src/markdown";
import { taskToggle } from "../src/tasklist";

const checkboxes = (html: string) => [...html.matchAll(/<input[^>]*>/g)].map((m) => m[0]);

test("Chat shows a task list's boxes, ticked as written and read-only", () => {
  const boxes = checkboxes(chatMarkup("- [ ] write it\n- [x] plan it\n- [X] ship it\n- plain"));
  assert.equal(boxes.length, 3);
  for (const b of boxes) {
    assert.match(b, /type="checkbox"/);
    assert.match(b, /disabled/);
    assert.doesNotMatch(b, /data-task/);
  }
  assert.deepEqual(
    boxes.map((b) => /checked/.test(b)),
    [false, true, true],
  );
});

test("the Plan's boxes are numbered within their block and can be ticked", () => {
  const [block] = planMarkup("- [ ] one\n- [x] two\n  - [ ] two.one\n");
  const boxes = checkboxes(block.markup);
  assert.deepEqual(
    boxes.map((b) => /data-task="(\d+)"/.exec(b)?.[1]),
    ["0", "1", "2"],
  );
  for (const b of boxes) assert.doesNotMatch(b, /disabled/);
  assert.match(boxes[1], /checked/);
});

const taskBlock = (source: string) =>
  planBlocks(source).find((b) => b.kind === "html" && b.tasks.length) as (PlanBlock & { kind: "html" }) | undefined;

test("each box's place in the source is its item's brackets, however the list nests", () => {
  const cases = [
    "- [ ] a\n- [x] b\n",
    "# Title\n\nText.\n\n1. [ ] first\n2. [x] second\n",
    "* [ ] loose\n\n* [x] items\n\n* [ ] here\n",
    "- [ ] outer\n  - [x] inner\n    - [ ] innermost\n- [ ] after\n",
    "> - [ ] quoted\n> - [x] too\n",
    '<Callout type="note">\n- [ ] in a callout\n- [x] done\n</Callout>\n',
    '<Tabs>\n<Tab title="One">\n- [ ] in a tab\n</Tab>\n<Tab title="Two">\n- [x] in another\n</Tab>\n</Tabs>\n',
    "- item [ ] not a task\n- [ ] a task with [x] inside\n",
    "- [ ] see - [ ] x in the text\n- [ ] x in the text\n",
  ];
  for (const source of cases) {
    const blocks = planBlocks(source).filter((b) => b.kind === "html");
    const tasks = blocks.flatMap((b) => (b.kind === "html" ? b.tasks : []));
    const expected = checkboxes(
      planMarkup(source)
        .map((b) => b.markup)
        .join(""),
    ).length;
    assert.equal(tasks.length, expected, source);
    for (const at of tasks) assert.match(source.slice(at, at + 3), /^\[[ xX]\]$/, `${JSON.stringify(source)} at ${at}`);
    // Distinct, in order.
    for (let i = 1; i < tasks.length; i++) assert.ok(tasks[i - 1] < tasks[i], source);
  }
  const nested = "- [ ] outer\n  - [x] inner\n    - [ ] innermost\n- [ ] after\n";
  assert.deepEqual(taskBlock(nested)!.tasks, [2, 16, 32, 48]);
  const tricky = "- [ ] see - [ ] x in the text\n- [ ] x in the text\n";
  assert.deepEqual(taskBlock(tricky)!.tasks, [2, 32]);
});

test("ticking flips exactly that item's mark", () => {
  const source = "Intro.\n\n- [ ] one\n- [x] two\n";
  const b = taskBlock(source)!;
  const tick = taskToggle(source, b.key, 0, false);
  assert.deepEqual(tick, { from: source.indexOf("[ ]") + 1, to: source.indexOf("[ ]") + 2, insert: "x" });
  const untick = taskToggle(source, b.key, 1, true)!;
  const after = source.slice(0, untick.from) + untick.insert + source.slice(untick.to);
  assert.equal(after, "Intro.\n\n- [ ] one\n- [ ] two\n");
});

test("a stale tick follows its block when the source moved, and flips nothing when it changed", () => {
  const source = "Intro.\n\n- [ ] one\n- [x] two\n";
  const key = taskBlock(source)!.key;
  // Text came before the list since the Preview showed it: the same item is ticked.
  const moved = "A new first paragraph, longer than the old.\n\n" + source;
  const tick = taskToggle(moved, key, 0, false)!;
  assert.equal(moved.slice(tick.from - 1, tick.from + 2), "[ ]");
  assert.equal(moved.slice(tick.from - 2, tick.from + 6), " [ ] one");
  // The list itself changed: nothing is flipped.
  assert.equal(taskToggle("Intro.\n\n- [ ] one\n- [x] two, edited\n", key, 0, false), null);
  assert.equal(taskToggle("Intro.\n", key, 0, false), null);
  // The box showed a state the source no longer has: nothing is flipped.
  assert.equal(taskToggle(source, key, 1, false), null);
  // No such box.
  assert.equal(taskToggle(source, key, 5, false), null);
});
