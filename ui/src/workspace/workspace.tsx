// The workspace of one document: Chat beside Plan or Decisions from 900 px
// (Chat can be hidden, which this browser remembers), one destination at a
// time with a bottom bar when narrower. Every pane stays mounted, so drafts,
// scroll and selection survive switching. The way back to the document list
// shows at every width.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, pathOf, type Channel, type Session } from "../api";
import type { PlannerStatus } from "../protocol";
import { waitsForAnswer } from "../protocol";
import { RoomSocket } from "../room";
import { PlanSync } from "../plansync";
import { canonicalize, onLinkClick } from "../router";
import { ChatPane } from "./chat";
import { PlanPane } from "./plan";
import { DecisionsPane } from "./decisions";
import { ConnectDialog, PlannerButton, Reads } from "./planner";
import { PlanFileActions } from "./planfile";
import { useWorkspaceShortcuts } from "../shortcuts";
import { ReferencedBy } from "./references";
import { HistoryButton, HistoryView, useHistoryShortcut } from "./history";
import { ArchiveButton, ArchivedBar, ChatToggle, DocTitle, StoppedBar, stoppedAfter, useChatShown } from "./header";
import { headingOf } from "./decisions";
import { ThemeToggle } from "../theme";
import { observeCode } from "../highlight";
import type { ChipInfo } from "../decisionchip";
import { descriptionWork, initialState, plannerFetched, reduce, withConnection, type RoomState } from "./reduce";
import type { WorkspaceCtx } from "./context";

function useWide(): boolean {
  const mq = useMemo(() => matchMedia("(min-width: 900px)"), []);
  const [wide, setWide] = useState(mq.matches);
  useEffect(() => {
    const f = () => setWide(mq.matches);
    mq.addEventListener("change", f);
    return () => mq.removeEventListener("change", f);
  }, []);
  return wide;
}

export function Workspace({ initial, session }: { initial: Channel; session: Session }) {
  const socket = useMemo(() => new RoomSocket(initial.id), [initial.id]);
  const plan = useMemo(() => new PlanSync(initial.id, socket), [socket]);
  const [state, setState] = useState<RoomState>(() => initialState(initial, socket.state));
  const wide = useWide();
  const [docView, setDocView] = useState<"plan" | "decisions">("plan");
  const [compactView, setCompactView] = useState<"chat" | "plan" | "decisions">("plan");
  const [connectOpen, setConnectOpen] = useState(false);
  const [historyOpen, setHistoryOpen] = useState(false);
  const [focusDecision, setFocusDecision] = useState<{ id: string; n: number } | null>(null);
  const [chatShown, setChatShown] = useChatShown();
  const root = useRef<HTMLDivElement>(null);

  // Code blocks get their colours wherever they appear.
  useEffect(() => (root.current ? observeCode(root.current) : undefined), []);
  // The editor's Decision chips name their questions.
  useEffect(() => {
    const m = new Map<string, ChipInfo>();
    for (const d of state.decisions) m.set(d.id, { question: headingOf(d).heading, status: d.status });
    plan.setQuestions(m);
  }, [state.decisions]);

  // Subscribed before the socket can deliver its first frame.
  useLayoutEffect(() => {
    const offState = socket.onState((connection) => setState((s) => withConnection(s, connection)));
    const off = socket.on((f) => {
      setState((s) => reduce(s, f));
      if (f.type === "session:hello" || f.type === "session:channel") plan.setCanEdit(f.canEdit);
      if (f.type === "session:channel") canonicalize(pathOf(f.channel.url));
    });
    // The Planner's state over HTTP, where this server offers it.
    api<PlannerStatus>("GET", `/api/channels/${initial.id}/planner`).then(
      (p) => setState((s) => plannerFetched(s, p)),
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

  const open = state.decisions.filter(waitsForAnswer).length;
  const showInPlan = (id: string) => {
    setDocView("plan");
    setCompactView("plan");
    setFocusDecision({ id, n: Date.now() });
  };
  const showDecision = (id: string) => {
    setDocView("decisions");
    setCompactView("decisions");
    requestAnimationFrame(() => {
      const el = document.querySelector<HTMLElement>(`.decisions [data-card="${CSS.escape(id)}"]`);
      if (!el) return;
      el.tabIndex = -1;
      el.scrollIntoView({ block: "center" });
      el.focus({ preventScroll: true });
    });
  };
  const ctx: WorkspaceCtx = {
    socket,
    plan,
    state,
    session,
    showInPlan,
    showDecision,
    connect: () => setConnectOpen(true),
    update: setState,
  };
  useWorkspaceShortcuts((where) => {
    if (where === "chat") {
      setCompactView("chat");
      setChatShown(true);
    } else {
      setDocView(where);
      setCompactView(where);
    }
    requestAnimationFrame(() => focusDestination(where, plan));
  });
  useHistoryShortcut(() => setHistoryOpen(true));
  const [owner, repoName] = state.channel.repository.split("/");
  const docsHref = `/documents/${encodeURIComponent(owner)}/${encodeURIComponent(repoName)}`;

  const chatOn = wide ? chatShown : compactView === "chat";
  const planShown = wide ? docView === "plan" : compactView === "plan";
  const decisionsShown = wide ? docView === "decisions" : compactView === "decisions";

  if (state.connection === "deleted") {
    return (
      <div class="workspace">
        <TopBar ctx={ctx} docsHref={docsHref} onPlanner={() => setConnectOpen(true)} />
        <section class="problem" role="alert">
          <h1>This document was deleted</h1>
          <p>
            Its plan, Chat and Decisions are gone.{" "}
            <a href={docsHref} onClick={onLinkClick}>
              Back to the documents of {state.channel.repository}
            </a>
          </p>
        </section>
      </div>
    );
  }

  return (
    <div class={"workspace " + (wide ? "wide" : "compact") + (wide && !chatShown ? " chat-hidden" : "")} ref={root}>
      <TopBar
        ctx={ctx}
        docsHref={docsHref}
        onPlanner={() => setConnectOpen(true)}
        onHistory={() => setHistoryOpen(true)}
      />
      <ArchivedBar ctx={ctx} docsHref={docsHref} />
      <StoppedBar ctx={ctx} />
      <div class="panes">
        <section class="pane chat-pane" hidden={!chatOn} aria-label="Chat" id="chat-pane">
          <ChatPane ctx={ctx} />
        </section>
        <section class="pane doc-pane" hidden={!(planShown || decisionsShown)} aria-label="Document">
          {wide && (
            <div class="switch">
              <div class="tabs" role="tablist" aria-label="Document view">
                <button
                  role="tab"
                  aria-selected={docView === "plan"}
                  class={docView === "plan" ? "on" : ""}
                  onClick={() => setDocView("plan")}
                >
                  Plan
                </button>
                <button
                  role="tab"
                  aria-selected={docView === "decisions"}
                  class={docView === "decisions" ? "on" : ""}
                  onClick={() => setDocView("decisions")}
                >
                  Decisions
                  {open > 0 && (
                    <span class="count" aria-label={`${open} unanswered`}>
                      {open}
                    </span>
                  )}
                </button>
              </div>
              <span class="spacer" />
              <ChatToggle shown={chatShown} onChange={setChatShown} />
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
            <button
              key={v}
              class={compactView === v ? "on" : ""}
              aria-current={compactView === v ? "page" : undefined}
              onClick={() => setCompactView(v)}
            >
              {v === "chat" ? "Chat" : v === "plan" ? "Plan" : "Decisions"}
              {v === "decisions" && open > 0 && (
                <span class="count" aria-label={`${open} unanswered`}>
                  {open}
                </span>
              )}
            </button>
          ))}
        </nav>
      )}
      {connectOpen && <ConnectDialog ctx={ctx} onClose={() => setConnectOpen(false)} />}
      {historyOpen && (
        <HistoryView
          ctx={ctx}
          onClose={() => setHistoryOpen(false)}
          questionOf={(id) => {
            const d = state.decisions.find((d) => d.id === id);
            return d ? headingOf(d).heading : null;
          }}
        />
      )}
    </div>
  );
}

// focusDestination puts the focus where a shortcut went: the editor (or the
// Plan's view switch when it shows Preview), the Decisions tab, the message
// box.
function focusDestination(where: "plan" | "decisions" | "chat", plan: PlanSync) {
  const q = (sel: string) => document.querySelector<HTMLElement>(sel);
  if (where === "chat") q(".composer textarea")?.focus();
  else if (where === "plan" && plan.view.dom.getClientRects().length) plan.view.focus();
  else if (where === "plan") q(".plan-toolbar [role=tab][aria-selected=true]")?.focus();
  else q(".doc-pane .switch [aria-selected=true], .bottom-bar [aria-current=page]")?.focus();
}

function TopBar({
  ctx,
  docsHref,
  onPlanner,
  onHistory,
}: {
  ctx: WorkspaceCtx;
  docsHref: string;
  onPlanner: () => void;
  onHistory?: () => void;
}) {
  const { state } = ctx;
  const label =
    state.connection === "offline" && ctx.socket.failures >= stoppedAfter
      ? "Chopin is not running"
      : { connecting: "Connecting…", online: "Live", offline: "Offline, reconnecting…", deleted: "Deleted" }[
          state.connection
        ];
  return (
    <header class="top-bar">
      <a class="brand" href="/" onClick={onLinkClick} title="Repositories">
        Chopin
      </a>
      <a
        class="crumb"
        href={docsHref}
        onClick={onLinkClick}
        title={`Back to the documents of ${state.channel.repository}`}
      >
        {state.channel.repository}
      </a>
      <span class="crumb-sep">/</span>
      <div class="doc-heading">
        <DocTitle ctx={ctx} />
        <DocDescription state={state} />
      </div>
      <span class="spacer" />
      <span class={"conn conn-" + state.connection} role="status" aria-live="polite">
        <span class="dot" />
        <span class="conn-label">{label}</span>
      </span>
      <span class="presence" title={`${state.members} open ${state.members === 1 ? "tab" : "tabs"} on this document`}>
        {state.members} {state.members === 1 ? "viewer" : "viewers"}
      </span>
      <ReferencedBy channelId={state.channel.id} refresh={state.channel.title} />
      <Reads ctx={ctx} />
      <PlanFileActions ctx={ctx} />
      {onHistory && <HistoryButton onClick={onHistory} />}
      <ArchiveButton ctx={ctx} />
      <ThemeToggle />
      <PlannerButton ctx={ctx} onClick={onPlanner} />
    </header>
  );
}

// DocDescription is the document's generated description, as plain text
// (it is untrusted model output), with "describing…" while a job writes it.
function DocDescription({ state }: { state: RoomState }) {
  const text = state.channel.description;
  const work = descriptionWork(state);
  if (!text && !work) return null;
  return (
    <p class="doc-description muted small" title={text}>
      {text && <span class="doc-description-text">{text}</span>}
      {work === "describing" && <span class="describing">describing…</span>}
      {work === "waiting" && !text && (
        <span class="describing">A description is written once a Planner is attached.</span>
      )}
    </p>
  );
}
