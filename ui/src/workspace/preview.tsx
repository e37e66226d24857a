// The Plan's Preview, fast on a long plan: the plan as its top-level
// blocks, each converted and sanitised once per source and keyed by a
// digest of it, so an edit re-renders only the blocks it changed. Each
// block is converted on its own: one that cannot be shows as plain text
// with a note, and the others show (markdown.ts). Every
// block's text is in the page at once; only Mermaid diagrams wait, drawn as
// they scroll into view.

import { Component } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { planBlocks, warmPlanBlocks, type PlanBlock, type PlanMark } from "../markdown";
import "./preview.css";
import { drawBlocks } from "../mermaid";
import { DecisionCard, headingOf } from "./decisions";
import { Isolated } from "../isolated";
import type { WorkspaceCtx } from "./context";
import { taskToggle } from "../tasklist";

// A block the Planner added or changed: its kind and the mark's index.
type BlockMark = { kind: "added" | "changed"; index: number } | null;

// HTMLBlock renders a block again only when its HTML or its mark changed.
// Its key (a digest of its source, markdown.ts) is on it as data-block, so
// a ticked checkbox names its block (tickTask).
type HTMLBlockProps = { html: string; mark: BlockMark; blockKey: string };
class HTMLBlock extends Component<HTMLBlockProps> {
  shouldComponentUpdate(n: HTMLBlockProps) {
    const m = this.props.mark;
    return n.html !== this.props.html || n.mark?.kind !== m?.kind || n.mark?.index !== m?.index;
  }
  render({ html, mark, blockKey }: HTMLBlockProps) {
    if (!mark) return <div class="plan-block" data-block={blockKey} dangerouslySetInnerHTML={{ __html: html }} />;
    return (
      <div
        data-block={blockKey}
        class={`plan-block plan-change plan-change-${mark.kind}`}
        data-change={mark.index}
        title={mark.kind === "added" ? "Added by the Planner" : "Changed by the Planner"}
        dangerouslySetInnerHTML={{ __html: html }}
      />
    );
  }
}

// markOf is the first added or changed mark over the block, if any.
function markOf(b: PlanBlock, marks: readonly PlanMark[]): BlockMark {
  const index = marks.findIndex((m) => m.kind !== "removed" && m.from < Math.max(b.to, b.from + 1) && b.from < m.to);
  return index < 0 ? null : { kind: marks[index].kind as "added" | "changed", index };
}

// tickTask edits the plan as a tick on a task's checkbox asks, through the
// editor as typing does (so it syncs, and Undo in the editor undoes it),
// at the item's place in the text the editor holds now (tasklist.ts); a
// box whose item is no longer there, or no longer as it showed, changes
// nothing. It says whether the plan changed.
function tickTask(ctx: WorkspaceCtx, box: HTMLInputElement): boolean {
  const view = ctx.plan.view;
  const key = box.closest<HTMLElement>("[data-block]")?.dataset.block;
  if (!key || view.state.readOnly) return false;
  // The click has already flipped the box: it showed the other state.
  const change = taskToggle(view.state.doc.toString(), key, Number(box.dataset.task), !box.checked);
  if (!change) return false;
  view.dispatch({ changes: change, userEvent: "input.task" });
  return true;
}

const removedLine = (index: number) => (
  <div
    key={"removed" + index}
    class="plan-change-removed"
    data-change={index}
    aria-label="The Planner removed a block here"
  >
    removed
  </div>
);

// withMarks is the Preview's elements with the Planner's marks (changes.ts):
// a bar on the blocks it added or changed, a "removed" line where blocks went.
function withMarks(
  blocks: PlanBlock[],
  marks: readonly PlanMark[],
  el: (b: PlanBlock, m: BlockMark) => preact.JSX.Element,
) {
  const removed = marks.map((m, i) => ({ m, i })).filter(({ m }) => m.kind === "removed");
  const out: preact.JSX.Element[] = [];
  for (const b of blocks) {
    while (removed.length && removed[0].m.from <= b.from) out.push(removedLine(removed.shift()!.i));
    out.push(el(b, markOf(b, marks)));
  }
  for (const { i } of removed) out.push(removedLine(i));
  return out;
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
  const [marks, setMarks] = useState<readonly PlanMark[]>(() => ctx.plan.marks());
  useEffect(() => ctx.plan.onMarks(setMarks), []);
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
    const box = (e.target as HTMLElement).closest<HTMLInputElement>("input.task-box[data-task]");
    if (box) {
      // The box shows what the plan says: the edit, rendered at once, ticks it.
      e.preventDefault();
      if (!tickTask(ctx, box)) return;
      const at = [...root.current!.querySelectorAll("input.task-box[data-task]")].indexOf(box);
      now.current();
      // The block is a new element now: keep the keyboard's place on the box.
      setTimeout(() => root.current?.querySelectorAll<HTMLInputElement>("input.task-box[data-task]")[at]?.focus());
      return;
    }
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
        {withMarks(shown ? blocks : blocks.slice(0, limit), marks, (b, mark) =>
          b.kind === "html" ? (
            <HTMLBlock key={b.key} blockKey={b.key} html={b.html} mark={mark} />
          ) : !shown ? (
            <div key={b.key} class="decision-slot" />
          ) : byId.has(b.id) ? (
            <Isolated key={b.key} text={headingOf(byId.get(b.id)!).heading} what="card">
              <DecisionCard ctx={ctx} d={byId.get(b.id)!} inPlan />
            </Isolated>
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
