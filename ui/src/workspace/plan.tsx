// The Plan: the CodeMirror editor (synced by PlanSync) and the rendered
// view, with the Decision cards where their <Decision id="..." /> lines sit.
// On a wide screen the two can show side by side (remembered per browser).

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { flashPassage, passageFlash, passageLines } from "../passageflash";
import type { SyncStatus } from "../plansync";
import { PlanView } from "./preview";
import { EditorKeys } from "./editorhint";
import { CommentsLayer } from "./comments";
import { ChangesChip } from "./changeschip";
import type { WorkspaceCtx } from "./context";
import { SplitToggle, useSplit } from "./split";
import { passageEvent, takePassage } from "./references";

export function PlanPane({
  ctx,
  focusDecision,
  visible,
}: {
  ctx: WorkspaceCtx;
  focusDecision: { id: string; n: number } | null;
  visible: boolean;
}) {
  const { plan, state } = ctx;
  const [mode, setMode] = useState<"edit" | "read">("edit");
  const [status, setStatus] = useState<SyncStatus>(plan.status());
  const host = useRef<HTMLDivElement>(null);
  const [frame, setFrame] = useState<HTMLDivElement | null>(null);
  const [split, setSplit, canSplit] = useSplit();
  const both = split && canSplit;

  useLayoutEffect(() => {
    host.current!.appendChild(plan.view.dom);
    setFrame(host.current);
    return plan.onStatus(setStatus);
  }, [plan]);

  useEffect(() => plan.addExtension(passageFlash), [plan]);

  // "Show in plan": the card in the rendered view, or its line in the
  // editor, and for a moment the passage it is about (the block it
  // follows; nothing more for a card placed at the end, block -1).
  useEffect(() => {
    if (!focusDecision) return;
    const linked = (state.decisions.find((d) => d.id === focusDecision.id)?.block ?? -1) >= 0;
    requestAnimationFrame(() => {
      if (mode === "read") {
        const el = document.querySelector<HTMLElement>(`.plan-view [data-card="${CSS.escape(focusDecision.id)}"]`);
        el?.scrollIntoView({ block: "center", behavior: "smooth" });
        const marked = [el];
        if (linked) {
          // The block before the card, past the call's other cards.
          let prev = el?.previousElementSibling;
          while (prev && (prev.matches("[data-card]") || prev.querySelector("[data-card]")))
            prev = prev.previousElementSibling;
          if (prev) marked.push(prev as HTMLElement);
        }
        for (const m of marked) m?.classList.add("flash", "passage-flash");
        setTimeout(() => marked.forEach((m) => m?.classList.remove("flash", "passage-flash")), 1600);
      } else {
        const pos = plan.decisionPos(focusDecision.id);
        if (pos != null) {
          plan.view.dispatch({ selection: { anchor: pos } });
          flashPassage(plan.view, passageLines(plan.view.state.doc, plan.view.state.doc.lineAt(pos).number, linked));
        }
        plan.view.focus();
      }
    });
  }, [focusDecision]);

  // A referenced passage's "Show passage" in Chat: its lines in the
  // editor, marked for a moment, once the plan is loaded.
  useEffect(() => {
    if (!status.ready) return;
    const show = () => {
      const p = takePassage(state.channel.id);
      if (!p) return;
      if (mode === "read" && !both) setMode("edit");
      requestAnimationFrame(() => {
        const doc = plan.view.state.doc;
        if (p.startLine < 1 || p.startLine > doc.lines) return;
        plan.view.dispatch({ selection: { anchor: doc.line(p.startLine).from } });
        flashPassage(plan.view, { from: p.startLine, to: Math.min(p.endLine, doc.lines) });
      });
    };
    show();
    window.addEventListener(passageEvent, show);
    return () => window.removeEventListener(passageEvent, show);
  }, [status.ready, state.channel.id, mode, both]);

  useEffect(() => {
    if (visible && (mode === "edit" || both)) plan.view.requestMeasure();
  }, [visible, mode, both]);

  let saved: string;
  if (!status.ready) saved = "Loading…";
  else if (state.connection !== "online" && status.unsent)
    // Not a count of the keystrokes waiting: what a person needs to know is
    // that nothing is lost and when it will be saved.
    saved = "Not saved yet: your changes are kept in this browser until Chopin is back";
  else if (status.unsent) saved = "Saving…";
  else saved = `Saved · revision ${status.version}`;

  return (
    <div class="plan">
      <div class="plan-toolbar">
        <div class="seg" role="tablist" aria-label="Plan view" hidden={both}>
          <button
            role="tab"
            aria-selected={mode === "edit"}
            class={mode === "edit" ? "on" : ""}
            onClick={() => setMode("edit")}
          >
            Edit
          </button>
          <button
            role="tab"
            aria-selected={mode === "read"}
            class={mode === "read" ? "on" : ""}
            onClick={() => setMode("read")}
          >
            Preview
          </button>
        </div>
        {canSplit && <SplitToggle on={split} onChange={setSplit} />}
        {!state.canEdit && <span class="badge readonly-label">Read-only</span>}
        <span class="spacer" />
        <ChangesChip plan={plan} mode={mode} />
        <span class="sync-status muted small" data-unsent={status.unsent} role="status">
          {saved}
        </span>
      </div>
      {(status.notice || status.stranded) && (
        <div class="notice" role="alert">
          <span>{status.notice}</span>
          {status.stranded && (
            <button class="quiet" onClick={() => navigator.clipboard?.writeText(status.stranded!)}>
              Copy my text
            </button>
          )}
          <button class="quiet" onClick={() => plan.dismiss()}>
            Dismiss
          </button>
        </div>
      )}
      {(mode === "edit" || both) && state.canEdit && <EditorKeys plan={plan} frame={frame} />}
      <div class={"plan-panes" + (both ? " split" : "")}>
        <div class="editor-host" ref={host} hidden={mode !== "edit" && !both} role="region" aria-label="Plan editor" />
        <PlanView ctx={ctx} shown={mode === "read" || both} />
      </div>
      <CommentsLayer ctx={ctx} mode={both ? "edit" : mode} />
    </div>
  );
}
