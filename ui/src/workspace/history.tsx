// The plan's History (docs/http-api.md, "versions", "timeline", "diff"):
// the versions grouped into sessions of work, newest first, each with who
// made it, when, and what it changed; the plan as it was at a chosen
// version, read-only as in Preview; a diff of it against now or another
// version, by block with changed words marked; and Restore and Revert,
// each a new change on top. It opens from the header's History (or Alt+4)
// and refreshes when the plan's version moves, in every tab.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError, type Session } from "../api";
import { planBlocks } from "../markdown";
import { isMac } from "../shortcuts";
import type { WorkspaceCtx } from "./context";
import "./history.css";

export interface Author {
  kind: "person" | "planner" | "mcp" | "import" | "restore" | "revert" | "server";
  name?: string;
  turn?: string;
  model?: string;
}

export interface TimelineEvent {
  kind: "thread" | "decision";
  id: string;
  version: number;
  time: number;
  text: string;
  action?: string; // started (a thread), asked or decided (a decision)
  status?: string;
}

// HistorySession is one session of work: a person's burst of typing, one
// Planner turn, one MCP update; versions from..to.
export interface HistorySession {
  from: number;
  to: number;
  start: number;
  end: number;
  author: Author;
  versions: number;
  summary: string;
  events?: TimelineEvent[];
}

export interface Timeline {
  sessions: HistorySession[];
  next?: number | null;
}

export type DiffWord = { op: "same" | "removed" | "added"; text: string };
export type DiffBlock =
  | { op: "same"; text: string }
  | { op: "changed"; heading?: string; old: string; new: string; words: DiffWord[] }
  | { op: "added"; heading?: string; text: string }
  | { op: "removed"; heading?: string; text: string };

export interface PlanDiff {
  from: number;
  to: number;
  summary: string;
  blocks: DiffBlock[];
}

export interface RevertConflict {
  version: number;
  time?: number;
  author?: Author | string;
  from?: number;
  to?: number;
}

interface Version {
  version: number;
  time: number;
  author: Author;
  summary: string;
}

type Who = Pick<Session, "login" | "name">;

// authorLabel is who made a session, in Chopin's words.
export function authorLabel(a: Author | string | undefined, me: Who): string {
  if (!a) return "Someone";
  if (typeof a === "string") return a === me.login ? "You" : a;
  const self = !!a.name && a.name === me.login;
  switch (a.kind) {
    case "person":
      return self || !a.name ? "You" : a.name;
    case "planner":
      return a.model ? `Planner · ${a.model}` : "Planner";
    case "mcp":
      return `${a.name || "An agent"} over MCP`;
    case "import":
      return "Imported";
    case "restore":
      return `Restored by ${self || !a.name ? "you" : a.name}`;
    case "revert":
      return `Reverted by ${self || !a.name ? "you" : a.name}`;
    default:
      return a.name ? `${a.name} (Chopin)` : "Chopin";
  }
}

const sameDay = (a: Date, b: Date) =>
  a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

// clockLabel is the time of day of ms, with its date when not today:
// "14:02", "14:02 on 1 Dec 2026".
export function clockLabel(ms: number, now = Date.now()): string {
  const d = new Date(ms);
  const time = d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
  if (sameDay(d, new Date(now))) return time;
  return `${time} on ${d.toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric" })}`;
}

// whenLabel is when something happened: relative today ("just now", "5
// minutes ago", "2 hours ago"), the date and time otherwise.
export function whenLabel(ms: number, now = Date.now()): string {
  const d = new Date(ms);
  if (!sameDay(d, new Date(now))) return clockLabel(ms, now);
  const s = Math.round((ms - now) / 1000);
  if (Math.abs(s) < 45) return "just now";
  if (Math.abs(s) < 3600) return rtf.format(Math.round(s / 60), "minute");
  return rtf.format(Math.round(s / 3600), "hour");
}

// eventLabel says what happened at a version besides the text changing.
export function eventLabel(e: TimelineEvent): string {
  if (e.kind === "thread") return `Comment started: “${e.text}”`;
  const what = e.action || e.status;
  return `Decision: ${e.text}${what ? " · " + what : ""}`;
}

// versionsLabel is a session's count of versions.
export const versionsLabel = (n: number) => (n === 1 ? "1 version" : `${n} versions`);

// restoreQuestion is what Restore asks before it restores.
export const restoreQuestion = (ms: number, now = Date.now()) =>
  `Restore the plan as it was at ${clockLabel(ms, now)}? Everything after stays in the history.`;

// revertKind is which revert a session offers: its Planner turn, its one
// change, or none (a session of several changes that is not a turn).
export function revertKind(s: HistorySession): "turn" | "change" | null {
  if (s.author.kind === "planner" && s.author.turn) return "turn";
  if (s.versions === 1) return "change";
  return null;
}

// sessionOf is the loaded session that holds version v.
export const sessionOf = (sessions: HistorySession[], v: number) =>
  sessions.find((s) => s.from <= v && v <= s.to) ?? null;

// ConflictGroup is a run of conflicting versions by one author in one
// session (a burst of typing is many versions), listed as one link.
export interface ConflictGroup {
  from: number;
  to: number;
  time?: number;
  author?: Author | string;
}

// groupConflicts joins conflicts, oldest first, that fall in the same
// loaded session, or else follow each other by the same author.
export function groupConflicts(conflicts: RevertConflict[], sessions: HistorySession[]): ConflictGroup[] {
  const out: ConflictGroup[] = [];
  const key = (c: RevertConflict) => {
    const s = sessionOf(sessions, c.version);
    return s ? "s" + s.from : "a" + JSON.stringify(c.author ?? "");
  };
  let last = "";
  for (const c of [...conflicts].sort((a, b) => a.version - b.version)) {
    const k = key(c);
    const g = out[out.length - 1];
    if (g && k === last) {
      g.to = c.version;
      g.time = c.time ?? g.time;
    } else out.push({ from: c.version, to: c.version, time: c.time, author: c.author });
    last = k;
  }
  return out;
}

// conflictLabel names a group of conflicting versions.
export const conflictLabel = (g: ConflictGroup, me: Who) =>
  (g.from === g.to ? `Version ${g.from}` : `Versions ${g.from}–${g.to}`) +
  (g.author ? ` by ${authorLabel(g.author, me)}` : "") +
  (g.time ? `, ${clockLabel(g.time)}` : "");

// DiffItem is a diff's block to show, or a run of unchanged blocks folded.
export type DiffItem =
  { kind: "block"; block: DiffBlock; index: number } | { kind: "fold"; index: number; blocks: string[] };

// foldDiff folds each run of two or more unchanged blocks into one item;
// an unchanged block alone between changes shows as it is.
export function foldDiff(blocks: DiffBlock[]): DiffItem[] {
  const out: DiffItem[] = [];
  for (let i = 0; i < blocks.length;) {
    if (blocks[i].op !== "same") {
      out.push({ kind: "block", block: blocks[i], index: i });
      i++;
      continue;
    }
    let j = i;
    while (j < blocks.length && blocks[j].op === "same") j++;
    if (j - i === 1) out.push({ kind: "block", block: blocks[i], index: i });
    else out.push({ kind: "fold", index: i, blocks: blocks.slice(i, j).map((b) => (b as { text: string }).text) });
    i = j;
  }
  return out;
}

// mergeTimeline puts a fresh first page in front of the older pages
// already read, dropping those the first page now holds.
export function mergeTimeline(old: Timeline | null, first: Timeline): Timeline {
  if (!old || !old.sessions.length || !first.sessions.length) return first;
  const oldest = Math.min(...first.sessions.map((s) => s.from));
  const older = old.sessions.filter((s) => s.to < oldest);
  if (!older.length) return first;
  return { sessions: [...first.sessions, ...older], next: old.next };
}

// post is a POST that keeps the refusal's whole body (a revert conflict
// lists the versions in the way).
async function post<T>(path: string): Promise<{ ok: true; data: T } | { ok: false; status: number; body: any }> {
  let res: Response;
  try {
    res = await fetch(path, { method: "POST", credentials: "same-origin" });
  } catch {
    return { ok: false, status: 0, body: { message: "Chopin is not reachable. Is it still running?" } };
  }
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (res.ok) return { ok: true, data: body as T };
  return { ok: false, status: res.status, body: body ?? { message: `${res.status} ${res.statusText}` } };
}

// HistoryButton opens the History from the header.
export function HistoryButton({ onClick }: { onClick: () => void }) {
  return (
    <button
      class="quiet history-button"
      title={`The plan's history: who changed what, restore and revert (${isMac ? "⌥" : "Alt"}+4)`}
      onClick={onClick}
    >
      <span class="history-icon" aria-hidden="true">
        ↺
      </span>
      <span class="history-word">History</span>
    </button>
  );
}

// useHistoryShortcut opens the History on Alt+4 (Option on a Mac),
// wherever the focus is, unless a dialog has the keyboard.
export function useHistoryShortcut(open: () => void) {
  const latest = useRef(open);
  latest.current = open;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.isComposing || e.code !== "Digit4") return;
      if (document.querySelector("dialog[open]")) return;
      e.preventDefault();
      latest.current();
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);
}

type Selected = { version: number; time: number; session: HistorySession | null };
type Pending = { what: "restore" | "revert-change" | "revert-turn"; question: string; button: string };
type Outcome = { kind: "done"; text: string } | { kind: "error"; text: string; conflicts?: RevertConflict[] } | null;

// stepSessions moves the focus between the sessions with the arrow keys,
// Home and End; Tab still goes through them one by one.
function stepSessions(e: KeyboardEvent) {
  const picks = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>(".history-pick")];
  const at = picks.indexOf(document.activeElement as HTMLElement);
  if (at < 0) return;
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: picks.length - 1 }[e.key];
  if (to === undefined || !picks[to]) return;
  e.preventDefault();
  picks[to].focus();
}

// HistoryView is the History, a dialog over the workspace: the timeline
// beside (narrow: above) the chosen version.
export function HistoryView({
  ctx,
  onClose,
  questionOf,
}: {
  ctx: WorkspaceCtx;
  onClose: () => void;
  questionOf: (decisionId: string) => string | null;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(document.activeElement);
  const id = ctx.state.channel.id;
  const base = `/api/channels/${encodeURIComponent(id)}`;
  const [timeline, setTimeline] = useState<Timeline | null>(null);
  const [loadError, setLoadError] = useState("");
  const [older, setOlder] = useState(false);
  const [sel, setSel] = useState<Selected | null>(null);
  const [planVersion, setPlanVersion] = useState(() => ctx.plan.status().version);
  const [outcome, setOutcome] = useState<Outcome>(null);

  useEffect(() => {
    ref.current?.showModal();
    return () => {
      // Focus goes back to what opened the view, unless the person has
      // moved on by the time the frame comes (a frame can come late in a
      // tab in the background).
      const el = opener.current as HTMLElement | null;
      requestAnimationFrame(() => {
        const now = document.activeElement;
        if (el && el.isConnected && (!now || now === document.body)) el.focus();
      });
    };
  }, []);
  useEffect(
    () =>
      ctx.plan.onStatus((s) => {
        if (s.ready) setPlanVersion(s.version);
      }),
    [],
  );

  // The first page, again whenever the plan's version moves: the older
  // pages already read stay.
  useEffect(() => {
    let live = true;
    const t = setTimeout(
      () =>
        api<Timeline>("GET", `${base}/timeline?limit=30`).then(
          (first) => {
            if (!live) return;
            setLoadError("");
            setTimeline((old) => mergeTimeline(old, first));
          },
          (e) => live && setLoadError(`The history could not be read: ${(e as Error).message}`),
        ),
      timeline ? 250 : 0,
    );
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [planVersion]);

  // Once the sessions show, the keyboard starts on the newest.
  const focused = useRef(false);
  useEffect(() => {
    if (focused.current || !timeline?.sessions.length) return;
    focused.current = true;
    ref.current?.querySelector<HTMLElement>(".history-pick")?.focus();
  }, [timeline]);

  const showOlder = async () => {
    if (!timeline?.next) return;
    setOlder(true);
    try {
      const page = await api<Timeline>("GET", `${base}/timeline?before=${timeline.next}&limit=30`);
      setTimeline((t) => ({ sessions: [...(t?.sessions ?? []), ...page.sessions], next: page.next }));
    } catch (e) {
      setLoadError(`Older sessions could not be read: ${(e as Error).message}`);
    } finally {
      setOlder(false);
    }
  };

  const choose = (s: HistorySession) => {
    setOutcome(null);
    setSel({ version: s.to, time: s.end, session: s });
  };
  // chooseVersion selects version v, in the session that holds it when
  // one is loaded.
  const chooseVersion = async (v: number, time?: number) => {
    const s = timeline ? sessionOf(timeline.sessions, v) : null;
    setSel({ version: v, time: time ?? s?.end ?? Date.now(), session: s });
    requestAnimationFrame(() =>
      ref.current?.querySelector<HTMLElement>(`.history-session[data-from="${s?.from}"] .history-pick`)?.focus(),
    );
  };

  return (
    <dialog
      ref={ref}
      class="history-dialog"
      aria-labelledby="history-title"
      onClose={onClose}
      onCancel={(e) => {
        // Escape closes a question first, then the History.
        if (ref.current?.querySelector(".history-confirm")) {
          e.preventDefault();
          ref.current.dispatchEvent(new CustomEvent("history-cancel"));
        }
      }}
    >
      <div class="history-head">
        <div class="history-title">
          <h2 id="history-title">History of the plan</h2>
          <span class="muted small">Now at version {planVersion}</span>
        </div>
        <button class="quiet" onClick={() => ref.current?.close()}>
          Close
        </button>
      </div>
      <div class="history-body">
        <section class="history-timeline" aria-label="Sessions of work">
          {loadError && (
            <p class="error-text" role="alert">
              {loadError}
            </p>
          )}
          {!timeline && !loadError && <p class="muted small">Reading the history…</p>}
          {timeline && !timeline.sessions.length && (
            <p class="history-empty muted">
              No history yet. Every change to the plan will show here, with who made it and when.
            </p>
          )}
          {timeline && timeline.sessions.length > 0 && (
            <ol class="history-sessions" onKeyDown={stepSessions}>
              {timeline.sessions.map((s) => (
                <SessionRow
                  key={s.from}
                  s={s}
                  me={ctx.session}
                  selected={!!sel?.session && sel.session.from === s.from}
                  onChoose={() => choose(s)}
                />
              ))}
            </ol>
          )}
          {timeline?.next ? (
            <button class="history-older" disabled={older} onClick={showOlder}>
              {older ? "Reading…" : "Show older"}
            </button>
          ) : null}
        </section>
        <section class="history-detail" aria-label="The chosen version">
          {sel ? (
            <Detail
              key={sel.version}
              ctx={ctx}
              base={base}
              sel={sel}
              sessions={timeline?.sessions ?? []}
              questionOf={questionOf}
              planVersion={planVersion}
              outcome={outcome}
              setOutcome={setOutcome}
              onVersion={(v, time) => setSel((was) => was && { ...was, version: v, time })}
              onConflict={chooseVersion}
            />
          ) : (
            <p class="muted history-hint">
              Choose a session to see the plan as it was then, what changed since, and to restore or revert it.
            </p>
          )}
        </section>
      </div>
    </dialog>
  );
}

function SessionRow({
  s,
  me,
  selected,
  onChoose,
}: {
  s: HistorySession;
  me: Who;
  selected: boolean;
  onChoose: () => void;
}) {
  const who = authorLabel(s.author, me);
  const when = whenLabel(s.end);
  return (
    <li class={"history-session" + (selected ? " on" : "")} data-from={s.from} data-to={s.to} data-kind={s.author.kind}>
      <button class="history-pick" aria-pressed={selected} onClick={onChoose}>
        <span class="history-who">{who}</span>
        <span class="history-when muted small">
          <time dateTime={new Date(s.end).toISOString()} title={new Date(s.end).toLocaleString()}>
            {when}
          </time>
        </span>
        <span class="history-summary">{s.summary}</span>
        <span class="history-count muted small">
          {versionsLabel(s.versions)}
          {s.versions > 1 ? ` (${s.from}–${s.to})` : ` (${s.to})`}
        </span>
      </button>
      {s.events && s.events.length > 0 && (
        <ul class="history-events small">
          {s.events.map((e) => (
            <li key={e.kind + e.id} class={"history-event history-event-" + e.kind}>
              {eventLabel(e)}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

function Detail({
  ctx,
  base,
  sel,
  sessions,
  questionOf,
  planVersion,
  outcome,
  setOutcome,
  onVersion,
  onConflict,
}: {
  ctx: WorkspaceCtx;
  base: string;
  sel: Selected;
  sessions: HistorySession[];
  questionOf: (decisionId: string) => string | null;
  planVersion: number;
  outcome: Outcome;
  setOutcome: (o: Outcome) => void;
  onVersion: (v: number, time: number) => void;
  onConflict: (v: number, time?: number) => void;
}) {
  const [tab, setTab] = useState<"plan" | "diff">("plan");
  const [against, setAgainst] = useState<number | null>(null); // null: now
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);
  const [inside, setInside] = useState<Version[]>([]);
  const root = useRef<HTMLDivElement>(null);
  const s = sel.session;
  const me = ctx.session;

  // The versions inside a session of several, to choose one.
  useEffect(() => {
    if (!s || s.versions < 2) return setInside([]);
    let live = true;
    api<{ versions: Version[] }>("GET", `${base}/versions?before=${s.to + 1}&limit=${Math.min(s.versions, 200)}`).then(
      (r) => live && setInside(r.versions.filter((v) => v.version >= s.from)),
      () => live && setInside([]),
    );
    return () => {
      live = false;
    };
  }, [s?.from, s?.to]);

  // Escape on a question cancels it (the dialog's cancel, HistoryView).
  useEffect(() => {
    const dialog = root.current?.closest("dialog");
    const f = () => cancel();
    dialog?.addEventListener("history-cancel", f);
    return () => dialog?.removeEventListener("history-cancel", f);
  });
  useEffect(() => {
    if (pending) root.current?.querySelector<HTMLElement>(".history-confirm .primary")?.focus();
  }, [pending]);

  const cancel = () => {
    setPending(null);
    requestAnimationFrame(() => root.current?.querySelector<HTMLElement>(".history-actions button")?.focus());
  };
  const ask = (what: Pending["what"]) => {
    setOutcome(null);
    if (what === "restore") setPending({ what, question: restoreQuestion(sel.time), button: "Restore" });
    else if (what === "revert-turn")
      setPending({
        what,
        question: `Undo everything this Planner turn changed, keeping what came after? It becomes a new change; the history keeps both.`,
        button: "Revert this turn",
      });
    else
      setPending({
        what,
        question: `Undo this change, keeping what came after? It becomes a new change; the history keeps both.`,
        button: "Revert this change",
      });
  };
  const run = async () => {
    if (!pending) return;
    setBusy(true);
    const what = pending.what;
    const path =
      what === "restore"
        ? `${base}/versions/${sel.version}/restore`
        : what === "revert-turn"
          ? `${base}/turns/${encodeURIComponent(s!.author.turn!)}/revert`
          : `${base}/versions/${s!.to}/revert`;
    const r = await post<{ version: number }>(path);
    setBusy(false);
    setPending(null);
    if (r.ok) {
      const at = r.data?.version;
      setOutcome({
        kind: "done",
        text:
          (what === "restore"
            ? `Restored the plan as it was at ${clockLabel(sel.time)}.`
            : what === "revert-turn"
              ? "Reverted the Planner's turn."
              : "Reverted the change.") +
          (at ? ` The plan is now at version ${at}; the history keeps what it replaced.` : ""),
      });
      return;
    }
    const b = r.body ?? {};
    if (b.code === "revert-conflict")
      setOutcome({
        kind: "error",
        text: b.message || "Later changes overlap it, so it cannot be undone cleanly.",
        conflicts: Array.isArray(b.conflicts) ? b.conflicts : [],
      });
    else
      setOutcome({
        kind: "error",
        text: `${what === "restore" ? "Could not restore it" : "Could not revert it"}: ${b.message || "the server refused."}`,
      });
  };

  const kind = s ? revertKind(s) : null;
  const canEdit = ctx.state.canEdit && !ctx.state.channel.archivedAt;
  const before = s && s.from > 1 ? s.from - 1 : null;
  return (
    <div class="history-chosen" ref={root}>
      <div class="history-chosen-head">
        <h3>
          {s ? authorLabel(s.author, me) : "Version " + sel.version}
          <span class="muted small"> · {whenLabel(sel.time)}</span>
        </h3>
        {s && <p class="history-chosen-summary small">{s.summary}</p>}
        {inside.length > 1 && (
          <label class="history-field small">
            Version
            <select
              value={String(sel.version)}
              onChange={(e) => {
                const v = Number(e.currentTarget.value);
                onVersion(v, inside.find((x) => x.version === v)?.time ?? sel.time);
              }}
            >
              {inside.map((v) => (
                <option key={v.version} value={String(v.version)}>
                  {v.version} · {clockLabel(v.time)} · {v.summary}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {canEdit && (
        <div class="history-actions">
          <button disabled={busy || sel.version === planVersion} onClick={() => ask("restore")}>
            Restore this version
          </button>
          {kind === "turn" && (
            <button disabled={busy} onClick={() => ask("revert-turn")}>
              Revert this turn
            </button>
          )}
          {kind === "change" && (
            <button disabled={busy} onClick={() => ask("revert-change")}>
              Revert this change
            </button>
          )}
        </div>
      )}
      {pending && (
        <div class="history-confirm" role="group" aria-label="Confirm">
          <p>{pending.question}</p>
          <div class="history-confirm-buttons">
            <button class="primary" disabled={busy} onClick={run}>
              {busy ? "Working…" : pending.button}
            </button>
            <button class="quiet" disabled={busy} onClick={cancel}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {outcome?.kind === "done" && (
        <p class="history-done" role="status">
          {outcome.text}
        </p>
      )}
      {outcome?.kind === "error" && (
        <div class="history-refused" role="alert">
          <p>{outcome.text}</p>
          {outcome.conflicts && outcome.conflicts.length > 0 && (
            <>
              <p class="small">The later changes in the way:</p>
              <ul class="history-conflicts">
                {groupConflicts(outcome.conflicts, sessions).map((g) => (
                  <li key={g.from}>
                    <button class="link" onClick={() => onConflict(g.to, g.time)}>
                      {conflictLabel(g, me)}
                    </button>
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      <div class="seg history-tabs" role="tablist" aria-label="What to show">
        <button
          role="tab"
          id="history-tab-plan"
          aria-controls="history-panel"
          aria-selected={tab === "plan"}
          class={tab === "plan" ? "on" : ""}
          onClick={() => setTab("plan")}
        >
          Plan as it was
        </button>
        <button
          role="tab"
          id="history-tab-diff"
          aria-controls="history-panel"
          aria-selected={tab === "diff"}
          class={tab === "diff" ? "on" : ""}
          onClick={() => setTab("diff")}
        >
          Diff
        </button>
      </div>
      <div
        id="history-panel"
        role="tabpanel"
        aria-labelledby={tab === "plan" ? "history-tab-plan" : "history-tab-diff"}
        class="history-panel"
      >
        {tab === "plan" ? (
          <OldPlan questionOf={questionOf} base={base} version={sel.version} />
        ) : (
          <>
            <label class="history-field small">
              Compare with…
              <select
                value={against === null ? "now" : String(against)}
                onChange={(e) => {
                  const v = e.currentTarget.value;
                  setAgainst(v === "now" ? null : Number(v));
                }}
              >
                <option value="now">Now (version {planVersion})</option>
                {before !== null && <option value={String(before)}>Just before this session (version {before})</option>}
                {sessions
                  .filter((o) => o.to !== sel.version && o.to !== before)
                  .map((o) => (
                    <option key={o.from} value={String(o.to)}>
                      Version {o.to} · {authorLabel(o.author, me)} · {whenLabel(o.end)}
                    </option>
                  ))}
              </select>
            </label>
            <DiffView base={base} version={sel.version} against={against} planVersion={planVersion} />
          </>
        )}
      </div>
    </div>
  );
}

// OldPlan is the plan's text at version, rendered read-only as Preview
// renders it.
function OldPlan({
  questionOf,
  base,
  version,
}: {
  questionOf: (decisionId: string) => string | null;
  base: string;
  version: number;
}) {
  const [source, setSource] = useState<string | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    let live = true;
    setSource(null);
    setError("");
    api<{ version: number; source: string }>("GET", `${base}/versions/${version}`).then(
      (r) => live && setSource(r.source),
      (e) => live && setError(`Version ${version} could not be read: ${(e as ApiError).message}`),
    );
    return () => {
      live = false;
    };
  }, [version]);
  const blocks = useMemo(() => (source === null ? [] : planBlocks(source)), [source]);
  if (error)
    return (
      <p class="error-text" role="alert">
        {error}
      </p>
    );
  if (source === null) return <p class="muted small">Reading version {version}…</p>;
  return (
    <article class="prose history-plan" aria-label={`The plan at version ${version}`}>
      {blocks.map((b) =>
        b.kind === "html" ? (
          <div key={b.key} class="plan-block" dangerouslySetInnerHTML={{ __html: b.html }} />
        ) : (
          <p key={b.key} class="history-decision small">
            Decision: {questionOf(b.id) ?? `a card not loaded here (${b.id.slice(0, 8)})`}
          </p>
        ),
      )}
      {!blocks.length && <p class="muted">The plan was empty.</p>}
    </article>
  );
}

// DiffView is what changed between version and against (now when null),
// older to newer, by block; unchanged runs fold.
function DiffView({
  base,
  version,
  against,
  planVersion,
}: {
  base: string;
  version: number;
  against: number | null;
  planVersion: number;
}) {
  const [diff, setDiff] = useState<PlanDiff | null>(null);
  const [error, setError] = useState("");
  const [open, setOpen] = useState<Set<number>>(new Set());
  const other = against ?? planVersion;
  const [from, to] = version <= other ? [version, against === null ? null : other] : [other, version];
  useEffect(() => {
    let live = true;
    setError("");
    api<PlanDiff>("GET", `${base}/diff?from=${from}${to === null ? "" : "&to=" + to}`).then(
      (d) => {
        if (!live) return;
        setDiff(d);
        setOpen(new Set());
      },
      (e) => live && setError(`The diff could not be made: ${(e as ApiError).message}`),
    );
    return () => {
      live = false;
    };
  }, [from, to, to === null ? planVersion : 0]);
  if (error)
    return (
      <p class="error-text" role="alert">
        {error}
      </p>
    );
  if (!diff) return <p class="muted small">Comparing…</p>;
  const items = foldDiff(diff.blocks);
  const changed = diff.blocks.some((b) => b.op !== "same");
  return (
    <div class="history-diff" aria-label={`Changes from version ${diff.from} to version ${diff.to}`}>
      <p class="history-diff-summary small">
        From version {diff.from} to {diff.to === planVersion && to === null ? "now" : "version " + diff.to}:{" "}
        {changed ? diff.summary : "no differences."}
      </p>
      {items.map((it) =>
        it.kind === "fold" ? (
          open.has(it.index) ? (
            it.blocks.map((t, i) => (
              <pre key={it.index + "-" + i} class="diff-block diff-same">
                {t}
              </pre>
            ))
          ) : (
            <button
              key={"fold" + it.index}
              class="diff-fold"
              aria-expanded="false"
              onClick={() => setOpen((o) => new Set(o).add(it.index))}
            >
              {it.blocks.length} unchanged blocks
            </button>
          )
        ) : (
          <DiffBlockView key={it.index} b={it.block} />
        ),
      )}
    </div>
  );
}

function DiffBlockView({ b }: { b: DiffBlock }) {
  const heading = b.op !== "same" && b.heading ? <span class="diff-heading"> under “{b.heading}”</span> : null;
  switch (b.op) {
    case "same":
      return <pre class="diff-block diff-same">{b.text}</pre>;
    case "added":
      return (
        <div class="diff-block diff-added">
          <p class="diff-label small">Added{heading}</p>
          <pre>
            <ins>{b.text}</ins>
          </pre>
        </div>
      );
    case "removed":
      return (
        <div class="diff-block diff-removed">
          <p class="diff-label small">Removed{heading}</p>
          <pre>
            <del>{b.text}</del>
          </pre>
        </div>
      );
    case "changed":
      return (
        <div class="diff-block diff-changed">
          <p class="diff-label small">Changed{heading}</p>
          <pre>
            {b.words.map((w, i) =>
              w.op === "same" ? (
                w.text
              ) : w.op === "added" ? (
                <ins key={i}>
                  <span class="visually-hidden">[added: </span>
                  {w.text}
                  <span class="visually-hidden">]</span>
                </ins>
              ) : (
                <del key={i}>
                  <span class="visually-hidden">[removed: </span>
                  {w.text}
                  <span class="visually-hidden">]</span>
                </del>
              ),
            )}
          </pre>
        </div>
      );
  }
}
