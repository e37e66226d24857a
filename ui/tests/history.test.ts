// The plan's History (src/workspace/history.tsx): who a session is in
// Chopin's words, when, what its events say, which revert it offers, how
// the diff folds unchanged blocks, and how a refreshed first page joins the
// older pages already read.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  authorLabel,
  clockLabel,
  conflictLabel,
  eventLabel,
  foldDiff,
  groupConflicts,
  mergeTimeline,
  restoreQuestion,
  revertKind,
  sessionOf,
  versionsLabel,
  whenLabel,
  type DiffBlock,
  type HistorySession,
} from "../src/workspace/history";

const me = { login: "ada", name: "Ada Lovelace" };

test("a session's author in Chopin's words", () => {
  assert.equal(authorLabel({ kind: "person", name: "ada" }, me), "You");
  assert.equal(authorLabel({ kind: "person", name: "grace" }, me), "grace");
  assert.equal(authorLabel({ kind: "planner", turn: "t1", model: "qwen2.5" }, me), "Planner · qwen2.5");
  assert.equal(authorLabel({ kind: "planner", turn: "t1" }, me), "Planner");
  assert.equal(authorLabel({ kind: "mcp", name: "claude-code" }, me), "claude-code over MCP");
  assert.equal(authorLabel({ kind: "restore", name: "grace" }, me), "Restored by grace");
  assert.equal(authorLabel({ kind: "restore", name: "ada" }, me), "Restored by you");
  assert.equal(authorLabel({ kind: "revert", name: "grace" }, me), "Reverted by grace");
  assert.equal(authorLabel({ kind: "revert", name: "ada" }, me), "Reverted by you");
  assert.equal(authorLabel({ kind: "import", name: "ada" }, me), "Imported");
  assert.equal(authorLabel({ kind: "server" }, me), "Chopin");
  // A conflict may name its author by login alone.
  assert.equal(authorLabel("ada", me), "You");
  assert.equal(authorLabel("grace", me), "grace");
});

test("when: relative today, the date and time before today", () => {
  const now = new Date(2026, 11, 2, 15, 30).getTime();
  assert.equal(whenLabel(now - 10_000, now), "just now");
  assert.equal(whenLabel(now - 5 * 60_000, now), "5 minutes ago");
  assert.equal(whenLabel(now - 2 * 3600_000, now), "2 hours ago");
  const yesterday = new Date(2026, 11, 1, 14, 2).getTime();
  assert.equal(whenLabel(yesterday, now), "14:02 on 1 Dec 2026");
  assert.equal(clockLabel(new Date(2026, 11, 2, 14, 2).getTime(), now), "14:02");
  assert.equal(
    restoreQuestion(new Date(2026, 11, 2, 14, 2).getTime(), now),
    "Restore the plan as it was at 14:02? Everything after stays in the history.",
  );
});

test("events and counts say what happened", () => {
  assert.equal(
    eventLabel({ kind: "thread", id: "t", version: 3, time: 0, text: "Use Postgres" }),
    "Comment started: “Use Postgres”",
  );
  assert.equal(
    eventLabel({
      kind: "decision",
      id: "d",
      version: 3,
      time: 0,
      text: "Which store?",
      action: "decided",
      status: "answered",
    }),
    "Decision: Which store? · decided",
  );
  assert.equal(
    eventLabel({ kind: "decision", id: "d", version: 3, time: 0, text: "Which store?" }),
    "Decision: Which store?",
  );
  assert.equal(versionsLabel(1), "1 version");
  assert.equal(versionsLabel(9), "9 versions");
});

const session = (from: number, to: number, author: HistorySession["author"]): HistorySession => ({
  from,
  to,
  start: 0,
  end: 0,
  author,
  versions: to - from + 1,
  summary: "",
  events: [],
});

test("a Planner turn reverts as a turn, one change as a change, a burst of typing not at all", () => {
  assert.equal(revertKind(session(4, 4, { kind: "planner", turn: "t1", model: "m" })), "turn");
  assert.equal(revertKind(session(4, 6, { kind: "planner", turn: "t1" })), "turn");
  assert.equal(revertKind(session(4, 4, { kind: "person", name: "ada" })), "change");
  assert.equal(revertKind(session(4, 9, { kind: "person", name: "ada" })), null);
  const all = [session(10, 12, { kind: "person" }), session(4, 9, { kind: "server" })];
  assert.equal(sessionOf(all, 11), all[0]);
  assert.equal(sessionOf(all, 4), all[1]);
  assert.equal(sessionOf(all, 3), null);
});

test("runs of unchanged blocks fold; one alone between changes shows", () => {
  const same = (text: string): DiffBlock => ({ op: "same", text });
  const blocks: DiffBlock[] = [
    same("# Plan"),
    same("Intro"),
    same("More"),
    { op: "changed", heading: "Plan", old: "a b", new: "a c", words: [] },
    same("Between"),
    { op: "added", text: "New" },
    same("x"),
    same("y"),
  ];
  assert.deepEqual(
    foldDiff(blocks).map((i) =>
      i.kind === "fold" ? `fold ${i.index} ${i.blocks.join("|")}` : `${i.block.op} ${i.index}`,
    ),
    ["fold 0 # Plan|Intro|More", "changed 3", "same 4", "added 5", "fold 6 x|y"],
  );
  assert.deepEqual(foldDiff([]), []);
  assert.deepEqual(
    foldDiff([same("only")]).map((i) => i.kind),
    ["block"],
  );
});

test("a refreshed first page keeps the older pages read", () => {
  const p = { kind: "person" as const, name: "ada" };
  const old = { sessions: [session(20, 25, p), session(10, 19, p), session(1, 9, p)], next: null };
  // The newest session grew and a new one came; 10..19 was on the first page too.
  const first = { sessions: [session(27, 27, p), session(20, 26, p), session(10, 19, p)], next: 10 };
  const merged = mergeTimeline(old, first);
  assert.deepEqual(
    merged.sessions.map((s) => `${s.from}-${s.to}`),
    ["27-27", "20-26", "10-19", "1-9"],
  );
  assert.equal(merged.next, null);
  // Nothing older read yet: the first page as it is.
  const fresh = mergeTimeline({ sessions: [session(20, 25, p)], next: 10 }, first);
  assert.equal(fresh, first);
});

test("a revert's conflicts are listed one link a session: a burst of typing is one", () => {
  const ada = { kind: "person" as const, name: "ada" };
  const all = [
    session(20, 20, { kind: "server" }),
    session(12, 19, ada),
    session(10, 11, { kind: "mcp", name: "cli" }),
  ];
  const c = (version: number, author: HistorySession["author"]) => ({ version, time: 0, author, from: 0, to: 0 });
  const groups = groupConflicts([c(14, ada), c(12, ada), c(13, ada), c(11, all[2].author), c(20, all[0].author)], all);
  assert.deepEqual(
    groups.map((g) => conflictLabel(g, me)),
    ["Version 11 by cli over MCP", "Versions 12–14 by You", "Version 20 by Chopin"],
  );
  // Versions no loaded session holds join while the author stays the same.
  const grace = { kind: "person" as const, name: "grace" };
  assert.deepEqual(
    groupConflicts([c(3, grace), c(4, grace), c(5, ada)], []).map((g) => [g.from, g.to]),
    [
      [3, 4],
      [5, 5],
    ],
  );
});
