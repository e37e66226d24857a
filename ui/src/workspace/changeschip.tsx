// The "N changes" chip of the Plan's toolbar: the Planner's changes marked
// in this tab (changes.ts). It steps through them, in the editor or the
// Preview, and clears them.

import { useEffect, useState } from "preact/hooks";
import { EditorView } from "@codemirror/view";
import type { PlanSync } from "../plansync";
import type { ChangeMark } from "./changes";
import "../changes.css";

export function ChangesChip({ plan, mode }: { plan: PlanSync; mode: "edit" | "read" }) {
  const [marks, setMarks] = useState<readonly ChangeMark[]>(plan.marks());
  const [at, setAt] = useState(-1);
  useEffect(
    () =>
      plan.onMarks((m) => {
        setMarks(m);
        setAt((a) => (m.length ? Math.min(a, m.length - 1) : -1));
      }),
    [plan],
  );
  const n = marks.length;
  if (!n) return null;

  const show = (i: number) => {
    setAt(i);
    const m = marks[i];
    if (mode === "read") {
      const el = document.querySelector<HTMLElement>(`.plan-view [data-change="${i}"]`);
      if (!el) return;
      el.scrollIntoView({ block: "center", behavior: "smooth" });
      el.classList.add("flash");
      setTimeout(() => el.classList.remove("flash"), 1600);
    } else {
      plan.view.dispatch({
        selection: { anchor: m.from },
        effects: EditorView.scrollIntoView(m.from, { y: "center" }),
      });
      plan.view.focus();
    }
  };
  const step = (by: number) => show(at < 0 ? (by > 0 ? 0 : n - 1) : (at + by + n) % n);
  const words = `${n} ${n === 1 ? "change" : "changes"}`;
  return (
    <div class="planner-changes" role="group" aria-label="The Planner's changes">
      <button type="button" class="planner-changes-count" title="Show the next change" onClick={() => step(1)}>
        {words}
        {at >= 0 && (
          <span class="planner-changes-at">
            {" "}
            · {at + 1} of {n}
          </span>
        )}
      </button>
      <button type="button" class="quiet" aria-label="Previous change" title="Previous change" onClick={() => step(-1)}>
        ‹
      </button>
      <button type="button" class="quiet" aria-label="Next change" title="Next change" onClick={() => step(1)}>
        ›
      </button>
      <button type="button" class="quiet" title="Clear the marks" onClick={() => plan.clearMarks()}>
        Clear
      </button>
    </div>
  );
}
