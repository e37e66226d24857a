// The line over the plan editor that says how its keyboard works: Esc
// leaves it, and Tab moves on unless "Tab indents" is on (a choice kept in
// this browser) or the cursor is in a list item, where Tab indents the
// item. It says where the focus is as it changes.

import { useEffect, useState } from "preact/hooks";
import { EditorView } from "@codemirror/view";
import type { PlanSync } from "../plansync";
import { inListItem, onTabIndents, setTabIndents, tabIndents } from "../editorkeys";

export function EditorKeys({ plan, frame }: { plan: PlanSync; frame: HTMLElement | null }) {
  const [indents, setIndents] = useState(tabIndents);
  const [where, setWhere] = useState<"out" | "editor" | "frame">("out");
  const [inList, setInList] = useState(false);
  useEffect(() => onTabIndents(setIndents), []);
  // Whether the cursor is in a list item, as it moves.
  useEffect(
    () =>
      plan.addExtension(
        EditorView.updateListener.of((u) => {
          if (u.selectionSet || u.docChanged) setInList(inListItem(u.state));
        }),
      ),
    [plan],
  );
  useEffect(() => {
    if (!frame) return;
    const track = () => {
      setWhere(document.activeElement === frame ? "frame" : frame.contains(document.activeElement) ? "editor" : "out");
      setInList(inListItem(plan.view.state));
    };
    // Enter on the frame goes back into the editor.
    const onKey = (e: KeyboardEvent) => {
      if (e.target === frame && e.key === "Enter") {
        e.preventDefault();
        plan.view.focus();
      }
    };
    const later = () => setTimeout(track);
    frame.addEventListener("focusin", track);
    frame.addEventListener("focusout", later);
    frame.addEventListener("keydown", onKey);
    return () => {
      frame.removeEventListener("focusin", track);
      frame.removeEventListener("focusout", later);
      frame.removeEventListener("keydown", onKey);
    };
  }, [frame]);
  let hint: string;
  if (where === "frame") hint = "Left the editor: Tab or Shift+Tab moves on, Enter goes back in.";
  else if (indents) hint = "Tab indents. Esc, then Tab, leaves the editor.";
  else if (inList) hint = "Tab indents this list item; Esc then Tab leaves the editor.";
  else hint = "Esc or Tab leaves the editor.";
  return (
    <div class="editor-keys" data-where={where}>
      <span id="editor-keys-hint" class="editor-keys-hint">
        {hint}
      </span>
      <span class="spacer" />
      <label title="Whether Tab indents the plan or moves to the next control (kept in this browser)">
        <input type="checkbox" checked={indents} onChange={(e) => setTabIndents(e.currentTarget.checked)} /> Tab indents
      </label>
    </div>
  );
}
