// The Planner's changes, marked in this tab: after an edit_plan (updates
// with clientID "planner", docs/room-protocol.md) the blocks it added or
// changed get a coloured bar in the editor and the Preview, and the blocks
// it removed a thin "removed" line where they were. The marks live in the
// editor's state, follow every later edit, are never stored or sent, and at
// most maxMarks are kept (the newest). The chip that steps through them and
// clears them is changeschip.tsx.

import { StateEffect, StateField, Text, type ChangeDesc, type Extension, type Range } from "@codemirror/state";
import { Decoration, EditorView, WidgetType, type DecorationSet } from "@codemirror/view";

export const plannerClientID = "planner";

// maxMarks is the most marks a tab keeps; older ones are dropped.
export const maxMarks = 50;

export type ChangeKind = "added" | "changed" | "removed";

// A mark covers the text from..to (a removed one is a point, from === to).
export interface ChangeMark {
  kind: ChangeKind;
  from: number;
  to: number;
  seq: number; // order of arrival: the newest are kept
}

// A block is a run of non-blank lines, a fenced code block kept whole.
export interface Block {
  from: number;
  to: number; // end of its last line, before the newline
  text: string;
}

// blocksOf splits text into blocks.
export function blocksOf(text: string): Block[] {
  const out: Block[] = [];
  let start = -1;
  let fence = "";
  let pos = 0;
  let lastEnd = 0;
  while (pos <= text.length) {
    let nl = text.indexOf("\n", pos);
    if (nl < 0) nl = text.length;
    const line = text.slice(pos, nl);
    const blank = line.trim() === "";
    if (fence) {
      if (line.trimStart().startsWith(fence)) fence = "";
      lastEnd = nl;
    } else if (blank) {
      if (start >= 0) out.push({ from: start, to: lastEnd, text: text.slice(start, lastEnd) });
      start = -1;
    } else {
      if (start < 0) start = pos;
      const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
      if (m) fence = m[1];
      lastEnd = nl;
    }
    if (nl >= text.length) break;
    pos = nl + 1;
  }
  if (start >= 0) out.push({ from: start, to: lastEnd, text: text.slice(start, lastEnd) });
  return out;
}

// The largest middle diffBlocks aligns block by block; a larger one is
// marked as changed whole.
const maxAlign = 1500;

// diffBlocks compares two versions of a text by blocks and returns the
// marks, in the positions of after: blocks of after that are new (added),
// replace blocks of before (changed), and the points of after where blocks
// of before are gone (removed).
export function diffBlocks(before: string, after: string): Omit<ChangeMark, "seq">[] {
  const a = blocksOf(before);
  const b = blocksOf(after);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre].text === b[pre].text) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf].text === b[b.length - 1 - suf].text)
    suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const out: Omit<ChangeMark, "seq">[] = [];
  if (!am.length && !bm.length) return out;
  // The point where removed blocks were: the start of the next block of
  // after, else the end of the text.
  const pointBefore = (j: number) => (pre + j < b.length ? b[pre + j].from : after.length);
  // pairs of matched blocks (i in am, j in bm), by longest common subsequence
  const pairs: [number, number][] = [];
  if (am.length * bm.length <= maxAlign * maxAlign && am.length && bm.length) {
    const n = am.length;
    const m = bm.length;
    const len = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        len[i * (m + 1) + j] =
          am[i].text === bm[j].text
            ? len[(i + 1) * (m + 1) + j + 1] + 1
            : Math.max(len[(i + 1) * (m + 1) + j], len[i * (m + 1) + j + 1]);
    for (let i = 0, j = 0; i < n && j < m;) {
      if (am[i].text === bm[j].text) {
        pairs.push([i, j]);
        i++;
        j++;
      } else if (len[(i + 1) * (m + 1) + j] >= len[i * (m + 1) + j + 1]) i++;
      else j++;
    }
  }
  pairs.push([am.length, bm.length]);
  let i = 0;
  let j = 0;
  for (const [pi, pj] of pairs) {
    // am[i..pi) became bm[j..pj). A new block like one gone (in order)
    // changed it; the others were added; the gone ones left are removed,
    // at the block after the last one changed.
    let gi = i;
    let removedAt = pointBefore(j);
    for (let k = j; k < pj; k++) {
      const blk = bm[k];
      let x = gi;
      while (x < pi && !alike(am[x].text, blk.text)) x++;
      if (x < pi) {
        for (; gi < x; gi++) out.push({ kind: "removed", from: blk.from, to: blk.from });
        gi = x + 1;
        out.push({ kind: "changed", from: blk.from, to: blk.to });
        removedAt = pointBefore(k + 1);
      } else out.push({ kind: "added", from: blk.from, to: blk.to });
    }
    if (gi < pi) out.push({ kind: "removed", from: removedAt, to: removedAt });
    i = pi + 1;
    j = pj + 1;
  }
  // A removed line goes before a block that starts where it is.
  const rank = (m: Omit<ChangeMark, "seq">) => (m.kind === "removed" ? 0 : 1);
  out.sort((x, y) => x.from - y.from || rank(x) - rank(y));
  return out;
}

// alike says whether two blocks share at least 40% of their words (the
// Dice coefficient of their word sets): one is then a change of the other.
function alike(a: string, b: string): boolean {
  const words = (t: string) => new Set(t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const wa = words(a);
  const wb = words(b);
  if (!wa.size || !wb.size) return a.trim() === b.trim();
  let common = 0;
  for (const w of wa) if (wb.has(w)) common++;
  return (2 * common) / (wa.size + wb.size) >= 0.4;
}

// mapMark maps a mark through changes. An added or changed block whose
// text is all gone becomes a removed point if it was there before the
// Planner's turn (changed), and nothing if the Planner added it.
export function mapMark(mark: ChangeMark, changes: ChangeDesc): ChangeMark | null {
  if (mark.kind === "removed") {
    const at = changes.mapPos(mark.from, -1);
    return { ...mark, from: at, to: at };
  }
  const from = changes.mapPos(mark.from, 1);
  const to = changes.mapPos(mark.to, -1);
  if (to > from) return { ...mark, from, to };
  if (mark.kind === "added") return null;
  return { ...mark, kind: "removed", from, to: from };
}

// mergeMarks adds fresh marks to held ones: a held mark that overlaps a
// fresh added or changed one is replaced by it (an added block changed
// again stays added), and only the newest maxMarks are kept.
export function mergeMarks(held: ChangeMark[], fresh: ChangeMark[]): ChangeMark[] {
  const out = held.slice();
  for (const f of fresh) {
    if (f.kind === "removed") {
      const covered = out.some((h) => (h.kind === "removed" ? h.from === f.from : h.from < f.from && f.from < h.to));
      if (!covered) out.push(f);
      continue;
    }
    let kind = f.kind;
    let from = f.from;
    let to = f.to;
    for (let k = out.length - 1; k >= 0; k--) {
      const h = out[k];
      const inside = h.kind === "removed" ? from < h.from && h.from < to : h.from < to && from < h.to;
      if (!inside) continue;
      if (h.kind === "added") kind = "added";
      if (h.kind !== "removed") {
        from = Math.min(from, h.from);
        to = Math.max(to, h.to);
      }
      out.splice(k, 1);
    }
    out.push({ kind, from, to, seq: f.seq });
  }
  out.sort((x, y) => x.seq - y.seq);
  const kept = out.slice(Math.max(0, out.length - maxMarks));
  return kept.sort((x, y) => x.from - y.from || x.seq - y.seq);
}

// The editor's part: the marks as state, changed by these effects.
export const addMarks = StateEffect.define<Omit<ChangeMark, "seq">[]>();
export const clearMarks = StateEffect.define<null>();

let seq = 0;

export const marksField = StateField.define<ChangeMark[]>({
  create: () => [],
  update(marks, tr) {
    if (tr.docChanged && marks.length) marks = marks.map((m) => mapMark(m, tr.changes)).filter((m) => m !== null);
    for (const e of tr.effects) {
      if (e.is(clearMarks)) marks = [];
      else if (e.is(addMarks) && e.value.length) {
        const fresh = e.value.map((m) => ({ ...m, seq: ++seq }));
        marks = mergeMarks(marks, fresh);
      }
    }
    return marks;
  },
});

class RemovedWidget extends WidgetType {
  eq() {
    return true;
  }
  toDOM() {
    const el = document.createElement("div");
    el.className = "cm-planner-removed";
    el.textContent = "removed";
    el.setAttribute("aria-label", "The Planner removed a block here");
    return el;
  }
}

const lineDeco = {
  added: Decoration.line({ class: "cm-planner-added", attributes: { title: "Added by the Planner" } }),
  changed: Decoration.line({ class: "cm-planner-changed", attributes: { title: "Changed by the Planner" } }),
};
const removedBefore = Decoration.widget({ widget: new RemovedWidget(), block: true, side: -1 });
const removedAfter = Decoration.widget({ widget: new RemovedWidget(), block: true, side: 1 });

function decorate(doc: Text, marks: ChangeMark[]): DecorationSet {
  const ranges: Range<Decoration>[] = [];
  const barred = new Set<number>(); // one bar a line
  for (const m of marks) {
    if (m.from > doc.length) continue;
    if (m.kind === "removed") {
      const line = doc.lineAt(m.from);
      // Gone at the very end of the text: the line goes after the last line.
      if (m.from === doc.length && line.length > 0) ranges.push(removedAfter.range(doc.length));
      else ranges.push(removedBefore.range(line.from));
      continue;
    }
    const first = doc.lineAt(m.from).number;
    const last = doc.lineAt(Math.min(m.to, doc.length)).number;
    for (let n = first; n <= last; n++) {
      const from = doc.line(n).from;
      if (barred.has(from)) continue;
      barred.add(from);
      ranges.push(lineDeco[m.kind].range(from));
    }
  }
  return Decoration.set(ranges, true);
}

const marksTheme = EditorView.baseTheme({
  ".cm-planner-added": { boxShadow: "inset 3px 0 0 var(--planner-added, #2e9d5b)" },
  ".cm-planner-changed": { boxShadow: "inset 3px 0 0 var(--planner-changed, #d08a16)" },
  ".cm-planner-removed": {
    borderTop: "1px solid var(--planner-removed, #c0392b)",
    color: "var(--planner-removed, #c0392b)",
    fontSize: "11px",
    lineHeight: "1.2",
    padding: "0 0 2px 4px",
    fontFamily: "var(--sans, sans-serif)",
  },
});

// plannerMarks is the editor extension: the field and its decorations.
export const plannerMarks: Extension = [
  marksField,
  EditorView.decorations.compute(["doc", marksField], (state) => decorate(state.doc, state.field(marksField))),
  marksTheme,
];
