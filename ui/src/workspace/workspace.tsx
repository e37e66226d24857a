// The workspace of one document: Chat beside Plan or Decisions when wide,
// one destination at a time with a bottom bar when compact. Every pane stays
// mounted, so drafts, scroll and selection survive switching.

import { useEffect, useLayoutEffect, useMemo, useState } from "preact/hooks";
import { api, pathOf, type Channel, type Decision, type Message, type Session } from "../api";
import { RoomSocket, type Connection, type Frame } from "../room";
import { PlanSync } from "../plansync";
import { canonicalize, onLinkClick } from "../router";
import { ChatPane } from "./chat";
import { PlanPane } from "./plan";
import { DecisionsPane } from "./decisions";
import { ConnectDialog, PlannerButton, type PlannerState } from "./planner";
import type { ModelState } from "./model";

export interface RoomState {
  channel: Channel;
  canEdit: boolean;
  canManage: boolean;
  connection: Connection;
  members: number;
  messages: Message[];
  decisions: Decision[];
  planner: PlannerState;
  model?: ModelState;
}

export interface WorkspaceCtx {
  socket: RoomSocket;
  plan: PlanSync;
  state: RoomState;
  session: Session;
  showInPlan: (id: string) => void;
}

function useWide(): boolean {
  const mq = useMemo(() => matchMedia("(min-width: 1200px)"), []);
  const [wide, setWide] = useState(mq.matches);
  useEffect(() => {
    const f = () => setWide(mq.matches);
    mq.addEventListener("change", f);
    return () => mq.removeEventListener("change", f);
  }, []);
  return wide;
}

function upsert<T extends { id: string }>(list: T[], item: T, order: (a: T, b: T) => number): T[] {
  const i = list.findIndex((x) => x.id === item.id);
  const out = i < 0 ? [...list, item] : list.map((x, j) => (j === i ? item : x));
  return i < 0 ? out.sort(order) : out;
}

// growReply applies a streaming reply's lighter frames: a chat:delta whose
// "at" is the field's length now (else it waits for the final message), a
// chat:tool row (the same id replaces the row), chat:images as they are now.
function growReply(m: Message, f: Frame): Message {
  const details = { ...(m.details ?? {}) };
  if (f.type === "chat:delta") {
    if (f.field === "text") return m.text.length === f.at ? { ...m, text: m.text + f.delta } : m;
    const r = typeof details.reasoning === "string" ? details.reasoning : "";
    if (r.length !== f.at) return m;
    details.reasoning = r + f.delta;
  } else if (f.type === "chat:tool") {
    const rows: any[] = Array.isArray(details.tools) ? details.tools : [];
    const i = rows.findIndex((r) => r.id === f.tool?.id);
    details.tools = i < 0 ? [...rows, f.tool] : rows.map((r, j) => (j === i ? f.tool : r));
  } else {
    details.images = f.images ?? [];
    details.refusedImages = f.refusedImages ?? [];
  }
  return { ...m, details };
}

export function Workspace({ initial, session }: { initial: Channel; session: Session }) {
  const socket = useMemo(() => new RoomSocket(initial.id), [initial.id]);
  const plan = useMemo(() => new PlanSync(initial.id, socket), [socket]);
  const [state, setState] = useState<RoomState>({
    channel: initial,
    canEdit: !initial.archivedAt,
    canManage: true,
    connection: socket.state,
    members: 1,
    messages: [],
    decisions: [],
    planner: { state: "unknown" },
  });
  const wide = useWide();
  const [docView, setDocView] = useState<"plan" | "decisions">("plan");
  const [compactView, setCompactView] = useState<"chat" | "plan" | "decisions">("plan");
  const [connectOpen, setConnectOpen] = useState(false);
  const [focusDecision, setFocusDecision] = useState<{ id: string; n: number } | null>(null);

  // Subscribed before the socket can deliver its first frame.
  useLayoutEffect(() => {
    const offState = socket.onState((connection) => setState((s) => ({ ...s, connection })));
    const off = socket.on((f: Frame) => {
      switch (f.type) {
        case "session:hello":
          setState((s) => ({ ...s, canEdit: f.canEdit, canManage: f.canManage, channel: { ...s.channel, ...f.channel, url: pathOf(f.channel.url) } }));
          plan.setCanEdit(f.canEdit);
          break;
        case "session:channel":
          setState((s) => ({ ...s, canEdit: f.canEdit, channel: { ...s.channel, ...f.channel, url: pathOf(f.channel.url), archivedAt: f.channel.archivedAt ?? null } }));
          plan.setCanEdit(f.canEdit);
          canonicalize(pathOf(f.channel.url));
          break;
        case "session:presence":
          setState((s) => ({ ...s, members: f.members }));
          break;
        case "chat:snapshot":
          setState((s) => ({ ...s, messages: f.messages }));
          break;
        case "chat:message":
          setState((s) => ({ ...s, messages: upsert(s.messages, f.message as Message, (a, b) => a.seq - b.seq) }));
          break;
        case "chat:delta":
        case "chat:tool":
        case "chat:images":
          setState((s) => ({ ...s, messages: s.messages.map((m) => (m.id === f.message ? growReply(m, f) : m)) }));
          break;
        case "decisions:snapshot":
          setState((s) => ({ ...s, decisions: f.decisions }));
          break;
        case "decision:update":
          setState((s) => ({ ...s, decisions: upsert(s.decisions, f.decision as Decision, (a, b) => a.createdAt - b.createdAt) }));
          break;
        case "planner:status": {
          const p = f.planner ?? f;
          setState((s) => ({ ...s, planner: { ...p, state: p.state ?? "unknown", runs: p.runs ?? s.planner.runs } as PlannerState }));
          break;
        }
        case "chat:removed":
          setState((s) => ({ ...s, messages: s.messages.filter((m) => m.id !== f.message) }));
          break;
        case "chat:model":
          setState((s) => ({ ...s, model: f.model }));
          break;
        case "planner:runs":
          setState((s) => ({ ...s, planner: { ...s.planner, runs: f.runs } }));
          break;
      }
    });
    // The Planner's state over HTTP, where this server offers it.
    api<any>("GET", `/api/channels/${initial.id}/planner`).then(
      (p) => setState((s) => (s.planner.state === "unknown" ? { ...s, planner: { ...p, state: p.state ?? "unknown", runs: s.planner.runs ?? p.runs } } : s)),
      () => {},
    );
    return () => {
      off();
      offState();
      plan.destroy();
      socket.close();
    };
  }, [socket]);

  useEffect(() => {
    document.title = `${state.channel.title} · Chopin`;
  }, [state.channel.title]);

  const open = state.decisions.filter((d) => d.status === "open").length;
  const showInPlan = (id: string) => {
    setDocView("plan");
    setCompactView("plan");
    setFocusDecision({ id, n: Date.now() });
  };
  const ctx: WorkspaceCtx = { socket, plan, state, session, showInPlan };
  const [owner, repoName] = state.channel.repository.split("/");
  const docsHref = `/documents/${encodeURIComponent(owner)}/${encodeURIComponent(repoName)}`;

  const chatShown = wide || compactView === "chat";
  const planShown = wide ? docView === "plan" : compactView === "plan";
  const decisionsShown = wide ? docView === "decisions" : compactView === "decisions";

  if (state.connection === "deleted") {
    return (
      <div class="workspace">
        <TopBar ctx={ctx} docsHref={docsHref} onPlanner={() => setConnectOpen(true)} />
        <section class="problem" role="alert">
          <h1>This document was deleted</h1>
          <p>
            Its plan, Chat and Decisions are gone. <a href={docsHref} onClick={onLinkClick}>Back to the documents of {state.channel.repository}</a>
          </p>
        </section>
      </div>
    );
  }

  return (
    <div class={"workspace " + (wide ? "wide" : "compact")}>
      <TopBar ctx={ctx} docsHref={docsHref} onPlanner={() => setConnectOpen(true)} />
      {state.channel.archivedAt && (
        <div class="archived-bar" role="status">
          Archived: read-only. Restore it from the <a href={docsHref + "?includeArchived=true"} onClick={onLinkClick}>document list</a> to edit again.
        </div>
      )}
      <div class="panes">
        <section class="pane chat-pane" hidden={!chatShown} aria-label="Chat">
          <ChatPane ctx={ctx} />
        </section>
        <section class="pane doc-pane" hidden={!(planShown || decisionsShown)} aria-label="Document">
          {wide && (
            <div class="switch" role="tablist" aria-label="Document view">
              <button role="tab" aria-selected={docView === "plan"} class={docView === "plan" ? "on" : ""} onClick={() => setDocView("plan")}>
                Plan
              </button>
              <button role="tab" aria-selected={docView === "decisions"} class={docView === "decisions" ? "on" : ""} onClick={() => setDocView("decisions")}>
                Decisions{open > 0 && <span class="count" aria-label={`${open} unanswered`}>{open}</span>}
              </button>
            </div>
          )}
          <div class="doc-body" hidden={!planShown}>
            <PlanPane ctx={ctx} focusDecision={focusDecision} visible={planShown} />
          </div>
          <div class="doc-body" hidden={!decisionsShown}>
            <DecisionsPane ctx={ctx} />
          </div>
        </section>
      </div>
      {!wide && (
        <nav class="bottom-bar" aria-label="Destinations">
          {(["chat", "plan", "decisions"] as const).map((v) => (
            <button key={v} class={compactView === v ? "on" : ""} aria-current={compactView === v ? "page" : undefined} onClick={() => setCompactView(v)}>
              {v === "chat" ? "Chat" : v === "plan" ? "Plan" : "Decisions"}
              {v === "decisions" && open > 0 && <span class="count" aria-label={`${open} unanswered`}>{open}</span>}
            </button>
          ))}
        </nav>
      )}
      {connectOpen && <ConnectDialog ctx={ctx} onClose={() => setConnectOpen(false)} />}
    </div>
  );
}

function TopBar({ ctx, docsHref, onPlanner }: { ctx: WorkspaceCtx; docsHref: string; onPlanner: () => void }) {
  const { state } = ctx;
  const label = { connecting: "Connecting…", online: "Live", offline: "Offline, reconnecting…", deleted: "Deleted" }[state.connection];
  return (
    <header class="top-bar">
      <a class="brand" href="/" onClick={onLinkClick} title="Repositories">Chopin</a>
      <a class="crumb" href={docsHref} onClick={onLinkClick}>{state.channel.repository}</a>
      <span class="crumb-sep">/</span>
      <h1 class="doc-title">{state.channel.title}</h1>
      <span class="spacer" />
      <span class={"conn conn-" + state.connection} role="status" aria-live="polite">
        <span class="dot" />
        {label}
      </span>
      <span class="presence" title={`${state.members} open ${state.members === 1 ? "tab" : "tabs"} on this document`}>
        {state.members} {state.members === 1 ? "viewer" : "viewers"}
      </span>
      <PlannerButton ctx={ctx} onClick={onPlanner} />
    </header>
  );
}
