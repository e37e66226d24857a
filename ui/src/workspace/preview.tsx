// The Plan's Preview, fast on a long plan: the plan as its top-level
// blocks, each converted and sanitised once per source and keyed by a
// digest of it, so an edit re-renders only the blocks it changed. Every
// block's text is in the page at once; only Mermaid diagrams wait, drawn as
// they scroll into view.

import { Component } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { planBlocks, warmPlanBlocks, type PlanBlock } from "../markdown";
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

// PlanView is the Preview. It stays mounted while the editor is shown,
// hidden, and gets ready in the browser's idle time a little at a time:
// the plan's blocks are converted a batch at a time once the plan rests,
// then mounted 600 at a time, so switching to Preview only shows
// it. Nothing of this holds up typing: each step is small and waits for
// idle time. Shown, it follows every edit after a 150 ms pause.
export function PlanView({ ctx, shown }: { ctx: WorkspaceCtx; shown: boolean }) {
  const [blocks, setBlocks] = useState<PlanBlock[]>([]);
  const [limit, setLimit] = useState(0); // how many blocks are mounted while hidden
  const root = useRef<HTMLDivElement>(null);
  const shownRef = useRef(shown);
  shownRef.current = shown;
  const now = useRef<() => void>(() => {});
  useEffect(() => {
    const plan = ctx.plan;
    let timer: number | undefined;
    let idle = 0;
    let last: string | null = null;
    const stop = () => {
      clearTimeout(timer);
      if (idle) cancelIdleCallback(idle);
      idle = 0;
    };
    const render = () => {
      stop();
      const text = plan.view.state.doc.toString();
      if (text !== last) setBlocks(planBlocks((last = text)));
    };
    now.current = render;
    const warm = () => {
      if (!plan.status().ready) return;
      const text = plan.view.state.doc.toString();
      if (text === last) return;
      const step = warmPlanBlocks(text);
      const run = (deadline: IdleDeadline) => {
        idle = 0;
        while (deadline.timeRemaining() > 8) if (!step()) return render();
        idle = requestIdleCallback(run, { timeout: 2000 });
      };
      idle = requestIdleCallback(run, { timeout: 2000 });
    };
    const off = plan.onDoc(() => {
      stop();
      if (shownRef.current) {
        if (last === null) render();
        else timer = window.setTimeout(render, 150);
      } else timer = window.setTimeout(warm, 300);
    });
    return () => {
      off();
      stop();
    };
  }, []);
  // Shown: at once, whatever was not ready yet.
  useEffect(() => {
    if (shown) now.current();
  }, [shown]);
  // Hidden: the blocks are mounted 600 at a time when idle (hidden, they cost no layout).
  useEffect(() => {
    if (shown || limit >= blocks.length) return;
    const id = requestIdleCallback(() => setLimit((n) => n + 600), { timeout: 2000 });
    return () => cancelIdleCallback(id);
  }, [shown, limit, blocks]);
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
  }, [blocks, shown]);
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
    <div class="plan-view" ref={root} onClick={onClick} hidden={!shown}>
      <article class="prose">
        {(shown ? blocks : blocks.slice(0, limit)).map((b) =>
          b.kind === "html" ? (
            <HTMLBlock key={b.key} html={b.html} />
          ) : !shown ? (
            <div key={b.key} class="decision-slot" />
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
