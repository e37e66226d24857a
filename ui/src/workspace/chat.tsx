// Chat: the transcript and the composer. Every refusal is shown in the
// server's own words.

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, type Message } from "../api";
import { renderChat } from "../markdown";
import { ErrorText } from "../pages/shell";
import type { WorkspaceCtx } from "./workspace";

export function ChatPane({ ctx }: { ctx: WorkspaceCtx }) {
  const { state, socket } = ctx;
  const [draft, setDraft] = useState(() => sessionStorage.getItem("chopin:draft:" + state.channel.id) ?? "");
  const [error, setError] = useState("");
  const [sending, setSending] = useState(false);
  const list = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    sessionStorage.setItem("chopin:draft:" + state.channel.id, draft);
  }, [draft]);

  useLayoutEffect(() => {
    const el = list.current!;
    if (stick.current) el.scrollTop = el.scrollHeight;
  }, [state.messages]);

  async function send() {
    const text = draft;
    if (!text.trim() || sending) return;
    setSending(true);
    setError("");
    try {
      await socket.request({ type: "chat:send", text });
      setDraft("");
      stick.current = true;
    } catch (e: any) {
      setError(e.message);
    } finally {
      setSending(false);
    }
  }

  async function stop() {
    try {
      await api("POST", `/api/channels/${state.channel.id}/planner/stop`);
    } catch (e: any) {
      setError(e.message);
    }
  }

  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <div class="chat">
      <div class="transcript" ref={list} onScroll={(e) => {
        const el = e.currentTarget;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }} aria-live="polite">
        {state.messages.length === 0 && (
          <p class="empty chat-empty">
            Talk about the plan here. Mention <code>@chopin</code> to ask the Planner.
          </p>
        )}
        {state.messages.map((m) => (
          <ChatMessage key={m.id} m={m} me={ctx.session.login} />
        ))}
      </div>
      {state.messages.some((m) => m.role === "planner" && m.status === "streaming") && (
        <div class="planner-working">
          <span class="muted small">The Planner is working…</span>
          <button class="quiet small" onClick={stop}>Stop Planner</button>
        </div>
      )}
      <form class="composer" onSubmit={(e) => (e.preventDefault(), send())}>
        <ErrorText error={error} />
        <textarea
          name="message"
          aria-label="Message"
          rows={2}
          placeholder={state.canEdit ? "Message · @chopin asks the Planner" : "This document is archived"}
          disabled={!state.canEdit}
          value={draft}
          onInput={(e) => {
            setDraft(e.currentTarget.value);
            if (error) setError("");
          }}
          onKeyDown={onKey}
        />
        <button class="primary" type="submit" disabled={!draft.trim() || sending || !state.canEdit}>Send</button>
      </form>
    </div>
  );
}

function ChatMessage({ m, me }: { m: Message; me: string }) {
  if (m.role === "system") {
    return (
      <div class="msg msg-system" data-seq={m.seq}>
        <span>{m.text}</span>
      </div>
    );
  }
  const who = m.role === "planner" ? "Planner" : m.author === me ? m.author : m.author || "someone";
  const time = new Date(m.createdAt).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return (
    <article class={"msg msg-" + m.role + (m.status ? " status-" + m.status : "")} data-seq={m.seq}>
      <header class="msg-head">
        <span class="msg-author">{who}</span>
        <time class="muted small" dateTime={new Date(m.createdAt).toISOString()}>{time}</time>
        {m.status === "streaming" && <span class="muted small">writing…</span>}
        {m.status === "failed" && <span class="badge danger-badge">failed</span>}
        {m.status === "stopped" && <span class="badge">stopped</span>}
      </header>
      {m.details && <Details details={m.details} />}
      {m.text && <div class="msg-body prose" dangerouslySetInnerHTML={{ __html: renderChat(m.text) }} />}
    </article>
  );
}

// Details renders a Planner reply's details generically: reasoning folded,
// and every tool call as a row under "Work details".
function Details({ details }: { details: any }) {
  if (typeof details !== "object" || details === null) return null;
  const reasoning: string[] = [];
  const pushText = (v: any) => {
    if (typeof v === "string" && v.trim()) reasoning.push(v);
    else if (Array.isArray(v)) v.forEach(pushText);
    else if (v && typeof v === "object" && typeof v.text === "string") reasoning.push(v.text);
  };
  pushText(details.reasoning);
  const rows: any[] = [details.tools, details.toolCalls, details.actions, details.calls, details.work].find(Array.isArray) ?? [];
  const failure = typeof details.error === "string" ? details.error : "";
  return (
    <div class="details">
      {failure && <p class="error-text">{failure}</p>}
      {reasoning.length > 0 && (
        <details class="reasoning">
          <summary>Reasoning</summary>
          {reasoning.map((r, i) => <p key={i} class="reasoning-text">{r}</p>)}
        </details>
      )}
      {rows.length > 0 && (
        <details class="work">
          <summary>Work details · {rows.length} {rows.length === 1 ? "action" : "actions"}</summary>
          <ul>
            {rows.map((r, i) => {
              const name = r.title ?? r.name ?? r.toolName ?? r.tool ?? "action";
              const status = r.status ?? r.state ?? "";
              const err = r.error?.message ?? (typeof r.error === "string" ? r.error : "");
              const kind = r.error?.kind || r.error?.code || "";
              const label = status === "running" ? "Running" : status === "done" ? "Done" : status === "failed" ? "Failed" : String(status);
              return (
                <li key={i} class={"work-row " + status}>
                  <span class="mono">{String(name)}</span>
                  {status && <span class="muted small">{label}{kind ? ` · ${kind}` : ""}</span>}
                  {typeof r.durationMs === "number" && status !== "running" && <span class="muted small">{(r.durationMs / 1000).toFixed(1)} s</span>}
                  {err && <span class="error-text small">{String(err)}</span>}
                </li>
              );
            })}
          </ul>
        </details>
      )}
    </div>
  );
}
