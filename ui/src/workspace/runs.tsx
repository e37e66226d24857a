// Run cards: the workflow runs the Planner reported (planner:runs, and the
// runs of GET /api/channels/:id/planner), each the run's latest state with
// its stages as a tree. A card opens on click to list every reported stage.
//
// The stopped rules of spec/agent-connection.md ("Questions", "Run stage
// deltas"): an unfinished stage under a stopped, failed, blocked or skipped
// stage shows as stopped, finished outcomes stay as they are, and a stopped,
// failed or blocked run shows every unfinished stage as stopped.

import { useState } from "preact/hooks";
import type { RunCard, Stage } from "../protocol";

const unfinished = new Set(["pending", "running", "awaiting_input", "paused"]);
const stopsBelow = new Set(["stopped", "failed", "blocked", "skipped"]);
const stopsRun = new Set(["stopped", "failed", "blocked"]);
export const liveRun = (r: RunCard) => r.status === "running" || r.status === "waiting" || r.status === "paused";

const runLabel: Record<string, string> = {
  running: "Running",
  waiting: "Waiting for an answer",
  paused: "Paused",
  finished: "Finished",
  blocked: "Blocked",
  failed: "Failed",
  stopped: "Stopped",
};
const stageLabel: Record<string, string> = {
  pending: "Pending",
  running: "Running",
  awaiting_input: "Waiting for an answer",
  paused: "Paused",
  blocked: "Blocked",
  completed: "Done",
  failed: "Failed",
  skipped: "Skipped",
  stopped: "Stopped",
};

export interface StageNode {
  stage: Stage;
  shown: string; // the status as displayed
  children: StageNode[];
}

// stageTree lays a run's stages out as a tree: a stage goes under its first
// parent this report knows, or at the top level. Every stage appears once,
// whatever its links (a cycle included), in the order reported.
export function stageTree(run: RunCard): StageNode[] {
  const stages = run.stages ?? [];
  const byId = new Map<string, Stage>();
  for (const s of stages) byId.set(s.id, s); // a repeated id keeps its last value
  const list = Array.from(byId.values());

  // Whether an ancestor (through every parent link) stops what is below it.
  const memo = new Map<string, boolean>();
  const stoppedAbove = (s: Stage, seen: Set<string>): boolean => {
    const m = memo.get(s.id);
    if (m !== undefined) return m;
    let out = false;
    for (const pid of s.parentIds ?? []) {
      const p = byId.get(pid);
      if (!p || seen.has(pid)) continue;
      seen.add(pid);
      if (stopsBelow.has(p.status) || stoppedAbove(p, seen)) {
        out = true;
        break;
      }
    }
    memo.set(s.id, out);
    return out;
  };
  const runStops = stopsRun.has(run.status);
  const shown = (s: Stage) =>
    unfinished.has(s.status) && (runStops || stoppedAbove(s, new Set([s.id]))) ? "stopped" : s.status;

  const nodes = new Map<string, StageNode>();
  for (const s of list) nodes.set(s.id, { stage: s, shown: shown(s), children: [] });
  const parentOf = (s: Stage) => (s.parentIds ?? []).find((p) => p !== s.id && byId.has(p));
  // Follow the first-parent chain; a stage on a cycle goes to the top level.
  const roots: StageNode[] = [];
  for (const s of list) {
    const p = parentOf(s);
    const chain = new Set([s.id]);
    let cyclic = false;
    for (let q = p; q; q = parentOf(byId.get(q)!)) {
      if (chain.has(q)) {
        cyclic = true;
        break;
      }
      chain.add(q);
    }
    if (!p || cyclic) roots.push(nodes.get(s.id)!);
    else nodes.get(p)!.children.push(nodes.get(s.id)!);
  }
  return roots;
}

function countStages(nodes: StageNode[], f: (n: StageNode) => boolean): number {
  return nodes.reduce((n, x) => n + (f(x) ? 1 : 0) + countStages(x.children, f), 0);
}

function current(nodes: StageNode[]): StageNode | undefined {
  let found: StageNode | undefined;
  const walk = (ns: StageNode[]) =>
    ns.forEach((n) => {
      if (n.shown === "running" || n.shown === "awaiting_input") found = n;
      walk(n.children);
    });
  walk(nodes);
  return found;
}

const clock = (sec?: number) =>
  sec ? new Date(sec * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "";

export function RunCards({
  runs,
  onControl,
  busy,
}: {
  runs: RunCard[];
  onControl?: (action: "stop" | "resume", run: string) => void;
  busy?: boolean;
}) {
  if (!runs?.length) return null;
  return (
    <section class="runs" aria-label="Runs">
      {runs.map((r) => (
        <RunCardView key={r.id} run={r} onControl={onControl} busy={busy} />
      ))}
    </section>
  );
}

function RunCardView({
  run,
  onControl,
  busy,
}: {
  run: RunCard;
  onControl?: (action: "stop" | "resume", run: string) => void;
  busy?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const tree = stageTree(run);
  const total = countStages(tree, () => true);
  const done = countStages(tree, (n) => n.shown === "completed");
  const now = current(tree);
  const earlier = run.earlierStages ?? 0;
  const status = runLabel[run.status] ?? run.status;
  const when = run.ended ? `ended ${clock(run.ended)}` : `started ${clock(run.started)}`;
  return (
    <article
      class={"run-card run-" + run.status + (open ? " open" : "")}
      data-run={run.id}
      aria-label={`Run: ${run.name}`}
    >
      <button class="run-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span class={"run-dot " + run.status} />
        <span class="run-name">{run.name || "Run"}</span>
        <span class={"badge run-status " + run.status}>{status}</span>
        <span class="spacer" />
        {total > 0 && (
          <span class="muted small run-count" title={`${done} of ${total} ${total === 1 ? "stage" : "stages"} done`}>
            {done}/{total} done
          </span>
        )}
        <span class="chevron" aria-hidden="true">
          {open ? "▾" : "▸"}
        </span>
      </button>
      {!open && (now || run.waiting > 0) && (
        <p class="run-now muted small">
          {now && <>Now: {now.stage.name}</>}
          {now && run.waiting > 0 && " · "}
          {run.waiting > 0 && `${run.waiting} ${run.waiting === 1 ? "question" : "questions"} waiting in Decisions`}
        </p>
      )}
      {open && (
        <div class="run-body">
          <p class="muted small run-meta">
            {when}
            {run.waiting > 0 &&
              ` · ${run.waiting} ${run.waiting === 1 ? "question" : "questions"} waiting in Decisions`}
          </p>
          {earlier > 0 && (
            <p class="muted small earlier-stages">
              {earlier} earlier {earlier === 1 ? "stage" : "stages"} not sent
            </p>
          )}
          {tree.length > 0 ? <StageList nodes={tree} /> : <p class="muted small">No stages reported.</p>}
          {onControl && liveRun(run) && (
            <div class="actions">
              {run.status === "paused" ? (
                <button class="small" disabled={busy} onClick={() => onControl("resume", run.id)}>
                  Resume this run
                </button>
              ) : (
                <button class="quiet small" disabled={busy} onClick={() => onControl("stop", run.id)}>
                  Stop this run
                </button>
              )}
            </div>
          )}
        </div>
      )}
    </article>
  );
}

function StageList({ nodes }: { nodes: StageNode[] }) {
  return (
    <ul class="stages">
      {nodes.map((n) => (
        <li key={n.stage.id} class={"stage stage-" + n.shown} data-stage={n.stage.id} data-shown={n.shown}>
          <div class="stage-row">
            <span class={"stage-mark " + n.shown} aria-hidden="true" />
            <span class="stage-name">{n.stage.name || n.stage.id}</span>
            {n.stage.kind && <span class="muted small mono">{n.stage.kind}</span>}
            <span class="spacer" />
            <span class="muted small stage-status">{stageLabel[n.shown] ?? n.shown}</span>
          </div>
          {n.children.length > 0 && <StageList nodes={n.children} />}
        </li>
      ))}
    </ul>
  );
}
