// The Plan's Preview, fast on a long plan: the plan as its top-level
// blocks, each converted and sanitised once per source and keyed by a
// digest of it, so an edit re-renders only the blocks it changed. Every
// block's text is in the page at once; only Mermaid diagrams wait, drawn as
// they scroll into view.

import { Component } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { planBlocks, warmPlanBlocks, type PlanBlock } from "../markdown";
import type { PlanSync } from "../plansync";
import "./preview.css";
import { drawBlocks } from "../mermaid";
import { DecisionCard } from "./decisions";
import type { WorkspaceCtx } from "./workspace";

// HTMLBlock renders a block again only when its HTML changed.
class HTMLBlock extends Component<{ html: string }> {
  shouldComponentUpdate(n: { html: string }) {
    return n.html !== this.props.html;
  }
  render({ html }: { html: string }) {
    return <div class="plan-block" dangerouslySetInnerHTML={{ __html: html }} />;
  }
}

// warmPreview converts the plan's blocks in the browser's idle time, a
// batch at a time, once the editor is ready and whenever the plan rests, so
// switching to Preview finds them converted. It never holds up typing: each
// batch is small and waits for idle time.
export function warmPreview(plan: PlanSync): () => void {
  let step: (() => boolean) | null = null;
  let handle = 0;
  let timer: number | undefined;
  const run = (deadline: IdleDeadline) => {
    handle = 0;
    while (step && deadline.timeRemaining() > 8) if (!step()) step = null;
    if (step) handle = requestIdleCallback(run, { timeout: 2000 });
  };
  const off = plan.onDoc((doc) => {
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      if (!plan.status().ready) return;
      step = warmPlanBlocks(doc.toString());
      if (!handle) handle = requestIdleCallback(run, { timeout: 2000 });
    }, 1000);
  });
  return () => {
    off();
    clearTimeout(timer);
    if (handle) cancelIdleCallback(handle);
  };
}

export function PlanView({ ctx }: { ctx: WorkspaceCtx }) {
  const [blocks, setBlocks] = useState<PlanBlock[]>([]);
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let timer: number | undefined;
    let last: string | null = null;
    const off = ctx.plan.onDoc((doc) => {
      clearTimeout(timer);
      const render = () => {
        const text = doc.toString();
        if (text !== last) setBlocks(planBlocks((last = text)));
      };
      // The first render is at once; edits after it wait for a pause.
      if (last === null) render();
      else timer = window.setTimeout(render, 150);
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, []);
  // Diagrams draw as they come near the screen.
  useEffect(() => {
    const el = root.current;
    if (!el) return;
    const io = new IntersectionObserver(
      (entries) => {
        const seen = entries.filter((e) => e.isIntersecting).map((e) => e.target as HTMLElement);
        seen.forEach((b) => io.unobserve(b));
        drawBlocks(seen);
      },
      { rootMargin: "400px 0px" },
    );
    el.querySelectorAll(".mermaid-block:not([data-drawn])").forEach((b) => io.observe(b));
    return () => io.disconnect();
  }, [blocks]);
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
        {blocks.map((b) =>
          b.kind === "html" ? (
            <HTMLBlock key={b.key} html={b.html} />
          ) : byId.has(b.id) ? (
            <DecisionCard key={b.key} ctx={ctx} d={byId.get(b.id)!} inPlan />
          ) : (
            <div key={b.key} class="decision-missing muted small">
              A decision card ({b.id.slice(0, 8)}) is not loaded yet.
            </div>
          ),
        )}
      </article>
    </div>
  );
}
