// Ticking a task list's checkbox in the Preview: the change to the plan's
// source that flips that item's "[ ]" or "[x]", found afresh in the text
// the editor holds now, so a tick on a Preview that is a moment behind
// (the Planner or another tab typed) flips the right item or nothing.

import { planBlocks } from "./markdown";

export interface TaskChange {
  from: number;
  to: number;
  insert: string;
}

// taskToggle is the change that ticks (or unticks, when wasChecked) box n
// of the block with key (markdown.ts's PlanBlock) in text, or null when
// text no longer holds that block, that box, or the box as it showed.
// A block's key is a digest of its own source, so it names the same text
// wherever that text has moved to.
export function taskToggle(text: string, key: string, n: number, wasChecked: boolean): TaskChange | null {
  const block = planBlocks(text).find((b) => b.key === key);
  if (!block || block.kind !== "html") return null;
  const at = block.tasks[n];
  if (at === undefined || at < 0) return null;
  const mark = text.slice(at, at + 3);
  if (wasChecked ? !/^\[[xX]\]$/.test(mark) : mark !== "[ ]") return null;
  return { from: at + 1, to: at + 2, insert: wasChecked ? " " : "x" };
}
