// Chat's transcript, fast at any length: each message is rendered once per
// change (its Markdown converted and sanitised once, kept by ID and text),
// only the newest messages are mounted and more as the person scrolls up,
// older ones come from the server page by page back to the first (GET
// .../messages?before=), and a long message shows its first page with
// "Show more" (docs/room-protocol.md "Long messages").

import { Component, type JSX } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import type { FieldCut, Message, MessageDetails, MessagePage, TextPage } from "../protocol";
import { renderChat } from "../markdown";
import { Isolated } from "../isolated";
import { ErrorText } from "../pages/shell";
import { Gallery } from "./gallery";
import { MessageFiles } from "./attachments";
import { MessageReferences } from "./references";
import { withOlder, type RoomState } from "./reduce";
import "./transcript.css";

// windowStep is how many more messages are mounted each time the person
// reaches the top of what is mounted; pageSize how many older ones one
// request reads.
const windowStep = 60;
const firstWindow = 20;
const pageSize = 100;

// chatHTML is a message's text as sanitised HTML, converted once per text:
// kept by message ID, so a re-render, a reconnect's snapshot or another
// message's stream costs nothing here. It never throws: Markdown nested past
// the bounds shows as text, and a message that still cannot be converted
// shows as plain text with a note (markdown.ts).
const htmlCache = new Map<string, { text: string; html: string }>();
export function chatHTML(id: string, text: string): string {
  const hit = htmlCache.get(id);
  if (hit && hit.text === text) return hit.html;
  const html = renderChat(text);
  htmlCache.delete(id);
  htmlCache.set(id, { text, html });
  if (htmlCache.size > 2000) htmlCache.delete(htmlCache.keys().next().value!);
  return html;
}

// mentionsPlanner: the text asks the Planner (mentions @chopin).
export const mentionsPlanner = (text: string) => /(^|[^\w@])@chopin\b/i.test(text);

// retriable is the id of the message a failed reply answers, when the person
// reading sent it and this reply is its latest: Retry belongs to them.
export function retriable(ms: Message[], i: number, me: string): string {
  if (ms[i].role !== "planner" || ms[i].status !== "failed") return "";
  for (let j = i - 1; j >= 0; j--) {
    const m = ms[j];
    if (m.role === "planner") return "";
    if (m.role === "person" && mentionsPlanner(m.text)) {
      const later = ms.slice(i + 1).some((x) => x.role === "planner");
      return m.author === me && !later ? m.id : "";
    }
  }
  return "";
}

function RetryButton({ channel, message, disabled }: { channel: string; message: string; disabled: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  return (
    <div class="retry">
      <button
        class="small"
        disabled={busy || disabled}
        onClick={async () => {
          setBusy(true);
          setError("");
          try {
            await api("POST", `/api/channels/${channel}/messages/${message}/retry`);
          } catch (e) {
            setError((e as Error).message);
            setBusy(false);
          }
        }}
      >
        Retry
      </button>
      <ErrorText error={error} />
    </div>
  );
}

// clock formats a message's time; made once, as making one is slow.
const clock = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit" });

export function ChatMessage({
  m,
  me,
  retry,
  channel,
  canEdit,
}: {
  m: Message;
  me: string;
  retry: string;
  channel: string;
  canEdit: boolean;
}) {
  if (m.role === "system" || m.details?.comment) {
    return (
      <div class="msg msg-system" role="note" aria-label="Notice" data-seq={m.seq}>
        <span class="notice-text">{m.details?.comment ? acceptedLine(m, me) : m.text}</span>
        <time class="notice-time" dateTime={new Date(m.createdAt).toISOString()}>
          {clock.format(m.createdAt)}
        </time>
      </div>
    );
  }
  const who = m.role === "planner" ? "Planner" : m.author === me ? m.author : m.author || "someone";
  const time = clock.format(m.createdAt);
  return (
    <article class={"msg msg-" + m.role + (m.status ? " status-" + m.status : "")} data-seq={m.seq}>
      <header class="msg-head">
        <span class="msg-author">{who}</span>
        <time class="muted small" dateTime={new Date(m.createdAt).toISOString()}>
          {time}
        </time>
        {m.status === "streaming" && <span class="muted small">writing…</span>}
        {m.status === "failed" && <span class="badge danger-badge">failed</span>}
        {m.status === "stopped" && <span class="badge">stopped</span>}
      </header>
      {m.details && <Details m={m} details={m.details} channel={channel} />}
      {m.text && (
        <LongText
          channel={channel}
          id={m.id}
          field="text"
          text={m.text}
          cut={m.cut?.text}
          render={(text) => <div class="msg-body prose" dangerouslySetInnerHTML={{ __html: chatHTML(m.id, text) }} />}
        />
      )}
      {m.role === "person" && m.details?.attachments && <MessageFiles files={m.details.attachments} />}
      {m.role === "person" && m.details?.references?.length ? (
        <MessageReferences refs={m.details.references} channel={channel} message={m.id} />
      ) : null}
      <Gallery images={m.details?.images ?? []} refused={m.details?.refusedImages ?? []} />
      {retry && <RetryButton channel={channel} message={retry} disabled={!canEdit} />}
    </article>
  );
}

// Details renders a Planner reply's details: the failure, the reasoning
// folded, and every tool call as a row under "Work details".
const toolLabel = { running: "Running", done: "Done", failed: "Failed" };

function Details({ m, details, channel }: { m: Message; details: MessageDetails; channel: string }) {
  const reasoning = details.reasoning?.trim() ? details.reasoning : "";
  const rows = details.tools ?? [];
  const failure = details.error ?? "";
  return (
    <div class="details">
      {failure && <p class="error-text">{failure}</p>}
      {reasoning && (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <LongText
            channel={channel}
            id={m.id}
            field="reasoning"
            text={reasoning}
            cut={m.cut?.reasoning}
            render={(text) => <p class="reasoning-text">{text}</p>}
          />
        </details>
      )}
      {rows.length > 0 && (
        <details class="work">
          <summary>
            Work details · {rows.length} {rows.length === 1 ? "action" : "actions"}
          </summary>
          <ul>
            {rows.map((r, i) => {
              const kind = r.error?.kind || r.error?.code || "";
              return (
                <li key={i} class={"work-row " + r.status}>
                  <span class="mono">{r.name}</span>
                  <span class="muted small">
                    {toolLabel[r.status] ?? r.status}
                    {kind ? ` · ${kind}` : ""}
                  </span>
                  {r.status !== "running" && <span class="muted small">{(r.durationMs / 1000).toFixed(1)} s</span>}
                  {r.error?.message && <span class="error-text small">{r.error.message}</span>}
                </li>
              );
            })}
          </ul>
        </details>
      )}
    </div>
  );
}

interface ItemProps {
  m: Message;
  me: string;
  retry: string;
  channel: string;
  canEdit: boolean;
}

// Item renders one message again only when it changed: the reducer gives a
// message that did not change back as the same object.
class Item extends Component<ItemProps> {
  shouldComponentUpdate(n: ItemProps) {
    const p = this.props;
    return n.m !== p.m || n.retry !== p.retry || n.canEdit !== p.canEdit || n.me !== p.me || n.channel !== p.channel;
  }
  render(p: ItemProps) {
    return (
      <Isolated text={p.m.text} what="message">
        <ChatMessage {...p} />
      </Isolated>
    );
  }
}

export interface TranscriptProps {
  state: RoomState;
  me: string;
  update: (f: (s: RoomState) => RoomState) => void;
  scroller: { current: HTMLDivElement | null };
  after: Promise<void>; // the messages wait for this (the editor's first paint)
}

// Transcript is the messages of the Chat pane. It is pure in its props, so
// a keystroke in the composer does not render it again.
export class Transcript extends Component<TranscriptProps> {
  shouldComponentUpdate(n: TranscriptProps) {
    const a = this.props.state;
    const b = n.state;
    return (
      a.messages !== b.messages ||
      a.older !== b.older ||
      a.canEdit !== b.canEdit ||
      a.channel.id !== b.channel.id ||
      n.me !== this.props.me
    );
  }
  render(p: TranscriptProps) {
    return <Window {...p} />;
  }
}

function Window({ state, me, update, scroller, after }: TranscriptProps) {
  const ms = state.messages;
  const [mounted, setMounted] = useState(0);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState("");
  const top = useRef<HTMLDivElement>(null);
  const keep = useRef<{ height: number; top: number } | null>(null);
  const busy = useRef(false); // a page is being read
  // Nothing until the editor shows the plan (after) and the browser is
  // idle, then a screenful, then the rest of the window. Should the plan be
  // slow to come, Chat does not wait for it past a few seconds.
  const [started, setStarted] = useState(false);
  useEffect(() => {
    let live = true;
    let id = 0;
    const start = () => {
      clearTimeout(late);
      if (!live || id) return;
      id = requestIdleCallback(
        () => {
          // What shows first is the newest: what was above (nothing but
          // the loading line) is kept where it was, the bottom.
          const el = scroller.current;
          if (el) keep.current = { height: el.scrollHeight, top: el.scrollTop };
          setStarted(true);
          setMounted((n) => Math.max(n, firstWindow));
          id = requestIdleCallback(
            () => {
              const el = scroller.current;
              if (el) keep.current = { height: el.scrollHeight, top: el.scrollTop };
              setMounted((n) => Math.max(n, windowStep));
            },
            { timeout: 3000 },
          );
        },
        { timeout: 1000 },
      );
    };
    const late = setTimeout(start, 3000);
    after.then(start);
    return () => {
      live = false;
      clearTimeout(late);
      cancelIdleCallback(id);
    };
  }, []);
  const from = Math.max(0, ms.length - mounted);
  const more = started && (from > 0 || state.older !== null);

  // Messages put above keep what the person was reading where it was; if
  // the top is still in sight after them, more come (the observer below
  // sees only changes).
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !keep.current) return;
    el.scrollTop = keep.current.top + (el.scrollHeight - keep.current.height);
    keep.current = null;
    const id = requestAnimationFrame(() => {
      const t = top.current;
      if (
        t &&
        el.scrollTop < el.clientHeight &&
        t.getBoundingClientRect().bottom > el.getBoundingClientRect().top - 200
      )
        earlierRef.current();
    });
    return () => cancelAnimationFrame(id);
  }, [mounted, ms]);

  const earlier = async () => {
    const el = scroller.current;
    if (!el || busy.current) return;
    if (from > 0) {
      keep.current = { height: el.scrollHeight, top: el.scrollTop };
      setMounted((n) => n + windowStep);
      return;
    }
    if (state.older === null) return;
    busy.current = true;
    setLoading(true);
    setError("");
    try {
      const page = await api<MessagePage>(
        "GET",
        `/api/channels/${state.channel.id}/messages?limit=${pageSize}&before=${encodeURIComponent(state.older)}`,
      );
      keep.current = { height: el.scrollHeight, top: el.scrollTop };
      update((s) => (s.older === state.older ? withOlder(s, page.messages, page.before) : s));
      setMounted((n) => n + windowStep);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      busy.current = false;
      setLoading(false);
    }
  };
  const earlierRef = useRef(earlier);
  earlierRef.current = earlier;

  // Reaching the top of what is mounted mounts or reads more.
  useEffect(() => {
    const el = top.current;
    if (!el || !scroller.current) return;
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting) && scroller.current!.scrollTop < scroller.current!.clientHeight)
          earlierRef.current();
      },
      { root: scroller.current, rootMargin: "200px 0px 0px 0px" },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [more, ms.length > 0]);
  if (!started && ms.length > 0) return <p class="muted small chat-loading">Loading messages…</p>;

  return (
    <>
      {ms.length === 0 && (
        <p class="empty chat-empty">
          Talk about the plan here. Mention <code>@chopin</code> to ask the Planner.
        </p>
      )}
      {more && (
        <div class="earlier" ref={top}>
          <button class="link small" disabled={loading} onClick={earlier}>
            {loading ? "Loading earlier messages…" : "Show earlier messages"}
          </button>
          <ErrorText error={error} />
        </div>
      )}
      {ms.length > 0 && !more && <p class="muted small chat-start">The start of this document's Chat.</p>}
      {ms.slice(from).map((m, i) => (
        <Item
          key={m.id}
          m={m}
          me={me}
          retry={retriable(ms, from + i, me)}
          channel={state.channel.id}
          canEdit={state.canEdit}
        />
      ))}
    </>
  );
}

// LongText is a message's text (or reasoning) that may have come cut: its
// first page, then each next page on "Show more".
export function LongText({
  channel,
  id,
  field,
  text,
  cut,
  render,
}: {
  channel: string;
  id: string;
  field: "text" | "reasoning";
  text: string;
  cut?: FieldCut;
  render: (text: string) => JSX.Element;
}) {
  const [rest, setRest] = useState<{ base: string; text: string; next: number | null }>({
    base: text,
    text: "",
    next: cut?.next ?? null,
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  // A new version of the message starts again from its first page.
  const first = () => ({ base: text, text: "", next: cut?.next ?? null });
  const current = rest.base === text ? rest : first();
  const more = async () => {
    if (current.next === null) return;
    setBusy(true);
    setError("");
    try {
      const p = await api<TextPage>(
        "GET",
        `/api/channels/${channel}/messages/${id}/text?field=${field}&from=${current.next}`,
      );
      setRest((r) => {
        const c = r.base === text ? r : first();
        return c.next === p.from ? { base: text, text: c.text + p.text, next: p.next } : c;
      });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const size = cut?.size ?? 0;
  const shown = new TextEncoder().encode(current.text).length + (cut?.next ?? 0);
  return (
    <>
      {render(text + current.text)}
      {current.next !== null && (
        <div class="show-more">
          <button class="small" disabled={busy} onClick={more}>
            {busy ? "Loading…" : "Show more"}
          </button>
          <span class="muted small">
            {" "}
            Showing {kib(shown)} of {kib(size)}
          </span>
          <ErrorText error={error} />
        </div>
      )}
    </>
  );
}

const kib = (n: number) => (n < 1024 ? `${n} bytes` : `${Math.round(n / 1024)} KiB`);

// acceptedLine is the message an Accept on a comment posts, as Chat shows
// it: who accepted a comment, and on which section (the prompt it carries
// is for the Planner).
function acceptedLine(m: Message, me: string): string {
  const who = m.author === me ? "You" : m.author || "Someone";
  const on = m.details?.comment?.section;
  return `${who} accepted a comment${on ? ` on “${on}”` : ""}; the Planner revises that passage.`;
}
