// The Plan: the CodeMirror editor (synced by PlanSync) and the rendered
// view, with the Decision cards where their <Decision id="..." /> lines sit.

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { EditorView } from "@codemirror/view";
import type { SyncStatus } from "../plansync";
import { renderPlan, type PlanSegment } from "../markdown";
import { drawDiagrams } from "../mermaid";
import { DecisionCard } from "./decisions";
import { ChangesChip } from "./changeschip";
import type { WorkspaceCtx } from "./workspace";

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

  useLayoutEffect(() => {
    host.current!.appendChild(plan.view.dom);
    return plan.onStatus(setStatus);
  }, [plan]);

  // "Show in plan": the card in the rendered view, or its line in the editor.
  useEffect(() => {
    if (!focusDecision) return;
    requestAnimationFrame(() => {
      if (mode === "read") {
        const el = document.querySelector<HTMLElement>(`.plan-view [data-card="${focusDecision.id}"]`);
        el?.scrollIntoView({ block: "center", behavior: "smooth" });
        el?.classList.add("flash");
        setTimeout(() => el?.classList.remove("flash"), 1600);
      } else {
        const pos = plan.decisionPos(focusDecision.id);
        if (pos != null)
          plan.view.dispatch({ selection: { anchor: pos }, effects: EditorView.scrollIntoView(pos, { y: "center" }) });
        plan.view.focus();
      }
    });
  }, [focusDecision]);

  useEffect(() => {
    if (visible && mode === "edit") plan.view.requestMeasure();
  }, [visible, mode]);

  let saved: string;
  if (!status.ready) saved = "Loading…";
  else if (state.connection !== "online" && status.unsent)
    saved = `${status.unsent} ${status.unsent === 1 ? "edit" : "edits"} kept until the connection is back`;
  else if (status.unsent) saved = "Saving…";
  else saved = `Saved · revision ${status.version}`;

  return (
    <div class="plan">
      <div class="plan-toolbar">
        <div class="seg" role="tablist" aria-label="Plan view">
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
      <div class="editor-host" ref={host} hidden={mode !== "edit"} />
      {mode === "read" && <PlanView ctx={ctx} />}
    </div>
  );
}

function PlanView({ ctx }: { ctx: WorkspaceCtx }) {
  const [segments, setSegments] = useState<PlanSegment[]>([]);
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let timer: number | undefined;
    let last = "";
    let lastMarks: unknown = null;
    // The text and the Planner's marks (changes.ts) are read together, so
    // the marks' places are in the text rendered.
    const schedule = () => {
      clearTimeout(timer);
      timer = window.setTimeout(
        () => {
          const text = ctx.plan.view.state.doc.toString();
          const marks = ctx.plan.marks();
          if (text !== last || marks !== lastMarks) setSegments(renderPlan((last = text), (lastMarks = marks)));
        },
        last ? 150 : 0,
      );
    };
    const offs = [ctx.plan.onDoc(schedule), ctx.plan.onMarks(schedule)];
    return () => {
      offs.forEach((off) => off());
      clearTimeout(timer);
    };
  }, []);
  useEffect(() => {
    if (root.current) drawDiagrams(root.current);
  }, [segments]);
  const onClick = (e: MouseEvent) => {
    const tab = (e.target as HTMLElement).closest<HTMLElement>("button[data-tab]");
    if (!tab) return;
    const tabs = tab.closest(".tabs")!;
    tabs.querySelectorAll(":scope > .tab-list > .tab").forEach((b) => b.classList.toggle("selected", b === tab));
    tabs
      .querySelectorAll<HTMLElement>(":scope > .tab-pane")
      .forEach((p) => p.classList.toggle("selected", p.dataset.pane === tab.dataset.tab));
  };
  const byId = new Map(ctx.state.decisions.map((d) => [d.id, d]));
  return (
    <div class="plan-view" ref={root} onClick={onClick}>
      <article class="prose">
        {segments.map((s, i) =>
          s.kind === "html" ? (
            <div key={"h" + i} dangerouslySetInnerHTML={{ __html: s.html }} />
          ) : byId.has(s.id) ? (
            <DecisionCard key={s.id} ctx={ctx} d={byId.get(s.id)!} inPlan />
          ) : (
            <div key={s.id} class="decision-missing muted small">
              A decision card ({s.id.slice(0, 8)}) is not loaded yet.
            </div>
          ),
        )}
      </article>
    </div>
  );
}
