// "Show in plan" briefly marks the passage a Decision card is about: the
// block its <Decision id="..." /> line follows (the lines above it up to a
// blank line, past the call's other cards), or only the card's own line
// when it was placed at the end of the plan, linked to no passage.

import { StateEffect, StateField, type Text, type Extension } from "@codemirror/state";
import { Decoration, EditorView, type DecorationSet } from "@codemirror/view";

const decisionLine = /^<Decision id="([^"]*)" \/>$/;

// passageLines is the first and last line (1-based) of what to mark for
// the card whose line is `line`: with linked, the block above it.
export function passageLines(doc: Text, line: number, linked: boolean): { from: number; to: number } {
  if (!linked) return { from: line, to: line };
  let n = line - 1;
  const skip = (t: string) => t.trim() === "" || decisionLine.test(t);
  while (n >= 1 && skip(doc.line(n).text)) n--;
  if (n < 1) return { from: line, to: line };
  const to = n;
  while (n > 1 && doc.line(n - 1).text.trim() !== "" && !decisionLine.test(doc.line(n - 1).text)) n--;
  return { from: n, to };
}

const flash = StateEffect.define<{ from: number; to: number } | null>();
const mark = Decoration.line({ class: "cm-passage-flash" });

const flashField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(set, tr) {
    for (const e of tr.effects)
      if (e.is(flash)) {
        if (!e.value) return Decoration.none;
        const lines = [];
        for (let n = e.value.from; n <= e.value.to && n <= tr.state.doc.lines; n++)
          lines.push(mark.range(tr.state.doc.line(n).from));
        return Decoration.set(lines);
      }
    return tr.docChanged ? set.map(tr.changes) : set;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export const passageFlash: Extension = flashField;

// flashPassage marks the lines for a moment and scrolls them into view.
export function flashPassage(view: EditorView, lines: { from: number; to: number }, ms = 2400) {
  const from = view.state.doc.line(lines.from).from;
  view.dispatch({ effects: [flash.of(lines), EditorView.scrollIntoView(from, { y: "center" })] });
  setTimeout(() => {
    if (view.state.field(flashField, false)) view.dispatch({ effects: flash.of(null) });
  }, ms);
}
