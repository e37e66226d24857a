// The editor shows each <Decision id="..." /> line as a compact chip naming
// its question, as the workspace's Decisions hold it. The chip replaces the
// line's text (an atomic range: the cursor steps over it whole), and
// plansync's change filter keeps the line itself from being edited;
// keepDecisionLines keeps typing beside a chip from joining its line.

import {
  type ChangeSet,
  EditorState,
  MapMode,
  RangeSetBuilder,
  StateEffect,
  type Text,
  Transaction,
  type Extension,
  type TransactionSpec,
} from "@codemirror/state";
import { Decoration, EditorView, ViewPlugin, WidgetType, type DecorationSet, type ViewUpdate } from "@codemirror/view";
import "./decisionchip.css";

export const decisionLine = /^<Decision id="([^"]*)" \/>$/;

// ChipInfo is what a chip says of its Decision.
export interface ChipInfo {
  question: string;
  status: string; // open, decided, reopened, discarded, expired
}

// refreshChips asks the chips to read their Decisions again.
export const refreshChips = StateEffect.define<null>();

const statusWords: Record<string, string> = {
  open: "waiting for your answer",
  decided: "decided",
  reopened: "reopened, waiting for a new answer",
  discarded: "discarded",
  expired: "expired",
};

class DecisionChip extends WidgetType {
  constructor(
    readonly id: string,
    readonly info: ChipInfo | undefined,
  ) {
    super();
  }
  eq(o: DecisionChip) {
    return o.id === this.id && o.info?.question === this.info?.question && o.info?.status === this.info?.status;
  }
  toDOM() {
    const chip = document.createElement("span");
    chip.className = "cm-decision-chip" + (this.info ? " chip-" + this.info.status : "");
    chip.dataset.decision = this.id;
    const label = document.createElement("span");
    label.className = "cm-decision-chip-label";
    label.textContent = "Decision";
    const q = document.createElement("span");
    q.className = "cm-decision-chip-question";
    q.textContent = this.info?.question || `not loaded yet (${this.id.slice(0, 8)})`;
    chip.append(label, q);
    const what = this.info ? `Decision, ${statusWords[this.info.status] ?? this.info.status}: ` : "Decision: ";
    chip.title = what + q.textContent + ". Answer it in Decisions or the Preview; this line is kept by Chopin.";
    chip.setAttribute("aria-label", what + q.textContent);
    return chip;
  }
  ignoreEvent() {
    return false;
  }
}

// decisionChips draws the chips; questions gives the Decisions the workspace
// holds now, and a refreshChips effect says they changed.
export function decisionChips(questions: () => Map<string, ChipInfo>): Extension {
  const plugin = ViewPlugin.fromClass(
    class {
      decorations: DecorationSet;
      constructor(view: EditorView) {
        this.decorations = build(view, questions());
      }
      update(u: ViewUpdate) {
        if (
          u.docChanged ||
          u.viewportChanged ||
          u.transactions.some((tr) => tr.effects.some((e) => e.is(refreshChips)))
        )
          this.decorations = build(u.view, questions());
      }
    },
    { decorations: (v) => v.decorations },
  );
  return [plugin, EditorView.atomicRanges.of((view) => view.plugin(plugin)?.decorations ?? Decoration.none)];
}

function build(view: EditorView, questions: Map<string, ChipInfo>): DecorationSet {
  const b = new RangeSetBuilder<Decoration>();
  const line = Decoration.line({ class: "cm-decision-line" });
  for (const { from, to } of view.visibleRanges) {
    for (let pos = from; pos <= to;) {
      const l = view.state.doc.lineAt(pos);
      const m = decisionLine.exec(l.text);
      if (m) {
        b.add(l.from, l.from, line);
        b.add(l.from, l.to, Decoration.replace({ widget: new DecisionChip(m[1], questions.get(m[1])) }));
      }
      pos = l.to + 1;
    }
  }
  return b.finish();
}

// keepDecisionLines: text typed or pasted right before or after a chip, on
// its line, goes on a line of its own; any other change that would leave a
// Decision line not whole on its own line (joining it to its neighbour, say)
// is not made. Changes from the server are never filtered.
export const keepDecisionLines: Extension = EditorState.transactionFilter.of((tr) => {
  if (!tr.docChanged) return tr;
  const start = tr.startState.doc;
  const lines = new Map<number, string>(); // from -> text of the decision lines a change touches
  tr.changes.iterChangedRanges((fromA, toA) => {
    const first = start.lineAt(Math.max(0, fromA - 1)).number;
    const last = start.lineAt(Math.min(start.length, toA + 1)).number;
    for (let n = first; n <= last; n++) {
      const l = start.line(n);
      if (decisionLine.test(l.text)) lines.set(l.from, l.text);
    }
  });
  if (!lines.size) return tr;
  const whole = (changes: ChangeSet, doc: Text) => {
    for (const [from, text] of lines) {
      const at = changes.mapPos(from, 1, MapMode.TrackDel);
      if (at === null) return false;
      const l = doc.lineAt(at);
      if (l.from !== at || l.text !== text) return false;
    }
    return true;
  };
  if (whole(tr.changes, tr.newDoc)) return tr;
  // One insertion at a chip's edge: give it a line of its own.
  const all: { from: number; to: number; text: string }[] = [];
  tr.changes.iterChanges((from, to, _fromB, _toB, inserted) => all.push({ from, to, text: inserted.toString() }));
  const c = all[0];
  if (all.length === 1 && c.from === c.to && c.text && !c.text.includes("\n")) {
    const l = start.lineAt(c.from);
    if (decisionLine.test(l.text) && (c.from === l.from || c.from === l.to)) {
      const before = c.from === l.from;
      const insert = before ? c.text + "\n" : "\n" + c.text;
      const spec: TransactionSpec = {
        changes: { from: c.from, insert },
        selection: { anchor: c.from + (before ? c.text.length : insert.length) },
        scrollIntoView: true,
        userEvent: tr.annotation(Transaction.userEvent),
      };
      return spec;
    }
  }
  return {};
});
