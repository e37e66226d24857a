// Decisions: a card per question the Planner asked, answerable here, over
// HTTP, or inline in the rendered Plan.

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { CardAnswer, ClientRequest, Decision, DecisionDraft, DraftField, Question } from "../protocol";
import { waitsForAnswer } from "../protocol";
import { cardText, renderChat, renderInline } from "../markdown";
import { Isolated } from "../isolated";
import { ago, ErrorText } from "../pages/shell";
import { drawDiagrams } from "../mermaid";
import type { WorkspaceCtx } from "./context";
import { Lightbox, useImageZoom } from "./gallery";

export function DecisionsPane({ ctx }: { ctx: WorkspaceCtx }) {
  const ds = ctx.state.decisions;
  const waiting = ds.filter(waitsForAnswer);
  // Resolved cards, the latest change first, under a history that starts
  // collapsed and stays as the person leaves it.
  const resolved = ds.filter((d) => !waitsForAnswer(d)).sort((a, b) => b.updatedAt - a.updatedAt);
  const [historyOpen, setHistoryOpen] = useState(false);
  return (
    <div class="decisions">
      <div class="decisions-inner">
        {ds.length === 0 && (
          <p class="empty">
            No decisions yet. When the Planner needs an answer from you, its questions appear here and in the plan.
          </p>
        )}
        {waiting.length > 0 && (
          <>
            <h2 class="section-title">Waiting for an answer · {waiting.length}</h2>
            {waiting.map((d) => (
              <Isolated key={d.id} text={headingOf(d).heading} what="card">
                <DecisionCard ctx={ctx} d={d} />
              </Isolated>
            ))}
          </>
        )}
        {ds.length > 0 && waiting.length === 0 && <p class="empty">Nothing waits for an answer.</p>}
        {resolved.length > 0 && (
          <details
            class="decision-history"
            open={historyOpen}
            onToggle={(e) => setHistoryOpen((e.currentTarget as HTMLDetailsElement).open)}
          >
            <summary class="section-title">History · {resolved.length}</summary>
            {historyOpen &&
              resolved.map((d) => (
                <Isolated key={d.id} text={headingOf(d).heading} what="card">
                  <DecisionCard ctx={ctx} d={d} />
                </Isolated>
              ))}
          </details>
        )}
      </div>
    </div>
  );
}

export function headingOf(d: Decision): { heading: string; body: string; chip?: string } {
  const c = d.call;
  if (c.method === "questionnaire") {
    const q = c.params?.questions?.[d.index];
    return q ? { ...cardText(q.question), chip: q.header } : { heading: "", body: "" };
  }
  if (c.method === "confirm") return { heading: c.title ?? "Confirm", body: c.message ?? "" };
  return { heading: c.title ?? "", body: "" };
}

function answerText(a: CardAnswer | undefined): string {
  if (!a) return "";
  if (a.labels?.length) return a.labels.join(", ");
  if (a.yes !== undefined) return a.yes ? "Yes" : "No";
  if (a.choice !== undefined) return a.choice;
  return a.text ?? "";
}

const statusLabel: Record<string, string> = {
  open: "Open",
  decided: "Decided",
  reopened: "Reopened",
  discarded: "Discarded",
  expired: "Expired",
};

type Confirming = "reopen" | "discard" | null;

export function DecisionCard({ ctx, d, inPlan }: { ctx: WorkspaceCtx; d: Decision; inPlan?: boolean }) {
  const { heading, body, chip } = headingOf(d);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState<Confirming>(null);
  const canEdit = ctx.state.canEdit;
  const live = waitsForAnswer(d) && canEdit;
  // A permission the Planner asked for (block -2) has no place in the plan,
  // and was acted on once answered: it cannot be reopened.
  const apart = d.block === -2;
  // Mermaid fences in the text and the previews, drawn by the plan's own
  // lazy renderer; the document's own images open large on click.
  const [zoomRef, zoom, closeZoom] = useImageZoom();
  useEffect(() => {
    if (zoomRef.current) drawDiagrams(zoomRef.current);
  });
  useEffect(() => setConfirming(null), [d.status]);

  // The shared live draft: what other tabs compose on this card, and where
  // their people are on it (decision:draft, relayed, never stored).
  const [others, setOthers] = useState<RemoteDraft[]>([]);
  const [incoming, setIncoming] = useState<{ draft: DecisionDraft; n: number } | null>(null);
  // Listening from the moment the card is shown, not a frame later (an
  // effect can wait up to a frame, and longer in a tab in the background):
  // a draft sent meanwhile would be lost.
  useLayoutEffect(
    () =>
      ctx.socket.on((f) => {
        if (f.type !== "decision:draft" || f.decision !== d.id) return;
        const who = f.name || f.login;
        setOthers((rs) => [...rs.filter((r) => r.tab !== f.tab), { tab: f.tab, who, field: f.field, at: Date.now() }]);
        if (f.draft) setIncoming({ draft: f.draft, n: Date.now() });
      }),
    [ctx.socket, d.id],
  );
  const present = others.filter((r) => r.field && Date.now() - r.at < presenceMs);
  const [, tick] = useState(0);
  useEffect(() => {
    if (!present.length) return;
    const t = setTimeout(() => tick((n) => n + 1), presenceMs);
    return () => clearTimeout(t);
  });
  const sendDraft = (field: DraftField, draft?: DecisionDraft) => {
    ctx.socket.send({ type: "decision:draft", decision: d.id, field, draft });
  };

  async function send(frame: ClientRequest) {
    setBusy(true);
    setError("");
    try {
      await ctx.socket.request(frame);
      setConfirming(null);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }
  const answer = (a: CardAnswer) => send({ type: "decision:answer", decision: d.id, answer: a });
  const discard = () => setConfirming("discard");

  return (
    <section
      ref={zoomRef}
      class={`decision-card status-${d.status}`}
      data-card={d.id}
      aria-label={`Decision: ${heading}`}
    >
      <header class="card-head">
        {chip && <span class="chip">{chip}</span>}
        <span class={"badge status-badge " + d.status}>{statusLabel[d.status] ?? d.status}</span>
        <span class="spacer" />
        {!inPlan && !apart && (
          <button class="link small" onClick={() => ctx.showInPlan(d.id)}>
            Show in plan
          </button>
        )}
      </header>
      <h3 class="card-heading" dangerouslySetInnerHTML={{ __html: renderInline(heading) }} />
      {body && <div class="card-body prose" dangerouslySetInnerHTML={{ __html: renderChat(body) }} />}
      {d.status === "decided" && (
        <p class="answered">
          <span class="muted">Answer{d.answeredBy ? ` from ${d.answeredBy}` : ""}:</span>{" "}
          <strong>{answerText(d.answer)}</strong>
          <span class="muted small"> · {ago(d.updatedAt)}</span>
        </p>
      )}
      {d.status === "reopened" && (
        <p class="muted small">Reopened{lastReopener(d) ? ` by ${lastReopener(d)}` : ""}: waiting for a new answer.</p>
      )}
      {d.status === "expired" && <p class="muted small">Expired: the Planner no longer waits for this answer.</p>}
      {d.status === "discarded" && (
        <p class="muted small">
          Discarded{d.discardedBy ? ` by ${d.discardedBy}` : ""}
          {d.answer ? (
            <>
              ; its answer{d.answeredBy ? ` from ${d.answeredBy}` : ""} was <strong>{answerText(d.answer)}</strong>.
            </>
          ) : (
            " without an answer."
          )}
        </p>
      )}
      {live && present.length > 0 && (
        <p class="draft-presence small" role="status">
          {presenceText(present)}
        </p>
      )}
      {live && confirming === null && (
        <CardForm d={d} busy={busy} onAnswer={answer} onDiscard={discard} onDraft={sendDraft} incoming={incoming} />
      )}
      {d.status === "decided" && canEdit && confirming === null && (
        <div class="actions card-actions">
          {!apart && (
            <button disabled={busy} onClick={() => setConfirming("reopen")}>
              Reopen…
            </button>
          )}
          <button class="quiet" disabled={busy} onClick={discard}>
            Discard…
          </button>
        </div>
      )}
      {confirming && (
        <div class="confirm card-confirm" role="group" aria-label={confirming === "reopen" ? "Reopen" : "Discard"}>
          <p>
            {confirming === "reopen"
              ? "Reopen this decision? Its answer stays under it as the previous one, and the Planner is told in its next turn."
              : d.status === "open"
                ? "Discard this question? It moves to the history, and the Planner, if it still waits, gets it back as cancelled."
                : "Discard this decision? It moves to the history" +
                  (d.answer ? " with its answer set aside" : "") +
                  ", and the Planner is told in its next turn."}
          </p>
          <div class="actions">
            <button
              class="primary"
              disabled={busy}
              onClick={() =>
                send({ type: confirming === "reopen" ? "decision:reopen" : "decision:discard", decision: d.id })
              }
            >
              {confirming === "reopen" ? "Reopen" : "Discard"}
            </button>
            <button disabled={busy} onClick={() => setConfirming(null)}>
              Keep it
            </button>
          </div>
        </div>
      )}
      {d.previous && d.previous.length > 0 && (
        <ol class="previous-answers" aria-label="Previous answers">
          {[...d.previous].reverse().map((p, i) => (
            <li key={i} class="small">
              <span class="muted">Previous{p.answeredBy ? ` from ${p.answeredBy}` : ""}:</span> {answerText(p.answer)}
              <span class="muted">
                {" "}
                · reopened{p.reopenedBy ? ` by ${p.reopenedBy}` : ""} {ago(p.reopenedAt)}
              </span>
            </li>
          ))}
        </ol>
      )}
      <ErrorText error={error} />
      {zoom && <Lightbox src={zoom.src} alt={zoom.alt} onClose={closeZoom} />}
    </section>
  );
}

// RemoteDraft is another tab on a card: who, and where (options, text, or
// "" once they left it).
interface RemoteDraft {
  tab: string;
  who: string;
  field: DraftField;
  at: number;
}

// A badge goes once its tab has said nothing for this long; a focused tab
// says where it is again well before.
const presenceMs = 20000;
const presenceRepeatMs = 8000;

function presenceText(rs: RemoteDraft[]): string {
  const on = (field: string) => [...new Set(rs.filter((r) => r.field === field).map((r) => r.who))];
  const parts: string[] = [];
  const choosing = on("options");
  const writing = on("text");
  if (choosing.length) parts.push(`${choosing.join(", ")} ${choosing.length === 1 ? "is" : "are"} choosing`);
  if (writing.length) parts.push(`${writing.join(", ")} ${writing.length === 1 ? "is" : "are"} writing an answer`);
  return parts.join(" · ");
}

function lastReopener(d: Decision): string {
  return d.previous?.[d.previous.length - 1]?.reopenedBy ?? "";
}

function CardForm({
  d,
  busy,
  onAnswer,
  onDiscard,
  onDraft,
  incoming,
}: {
  d: Decision;
  busy: boolean;
  onAnswer: (a: CardAnswer) => void;
  onDiscard: () => void;
  onDraft: (field: DraftField, draft?: DecisionDraft) => void;
  incoming: { draft: DecisionDraft; n: number } | null;
}) {
  const c = d.call;
  const textOnly = c.method === "input" || c.method === "editor";
  const [picked, setPickedState] = useState<string[]>([]);
  const [text, setTextState] = useState(c.method === "editor" ? (c.initial ?? "") : "");
  const [writing, setWritingState] = useState(textOnly);
  const name = "card-" + d.id;

  // What this tab composes goes to the others as it changes (text at most
  // every 150 ms), and another tab's draft replaces this one's.
  const now = useRef({ picked, text, writing, field: "" as DraftField });
  const timer = useRef<number | undefined>(undefined);
  const share = (
    field: DraftField,
    next: Partial<{ picked: string[]; text: string; writing: boolean }>,
    soon = false,
  ) => {
    Object.assign(now.current, next, { field });
    const send = () => {
      timer.current = undefined;
      const n = now.current;
      const draft: DecisionDraft = { writing: n.writing || undefined, text: n.text || undefined };
      if (c.method === "select") draft.choice = n.picked[0];
      else if (n.picked.length) draft.labels = n.picked;
      onDraft(n.field, draft);
    };
    clearTimeout(timer.current);
    if (soon) timer.current = window.setTimeout(send, 150);
    else send();
  };
  const setPicked = (f: string[] | ((p: string[]) => string[])) => {
    const next = typeof f === "function" ? f(now.current.picked) : f;
    setPickedState(next);
    share("options", { picked: next });
  };
  const setText = (t: string) => {
    setTextState(t);
    share("text", { text: t }, true);
  };
  const setWriting = (w: boolean) => {
    setWritingState(w);
    share(w ? "text" : "options", { writing: w });
  };
  useEffect(() => {
    if (!incoming) return;
    const g = incoming.draft;
    const p = g.labels ?? (g.choice !== undefined ? [g.choice] : []);
    const w = textOnly || !!g.writing;
    Object.assign(now.current, { picked: p, text: g.text ?? "", writing: w });
    setPickedState(p);
    setTextState(g.text ?? "");
    setWritingState(w);
  }, [incoming?.n]);
  // Where this person is on the card, said again while they stay.
  const form = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = form.current;
    if (!el) return;
    const fieldOf = (t: EventTarget | null): DraftField =>
      t instanceof HTMLTextAreaElement || (t instanceof HTMLInputElement && t.type === "text") ? "text" : "options";
    let again: number | undefined;
    const onIn = (e: FocusEvent) => {
      const field = fieldOf(e.target);
      if (field !== now.current.field) share(field, {});
      clearInterval(again);
      again = window.setInterval(() => share(now.current.field, {}), presenceRepeatMs);
    };
    const onOut = (e: FocusEvent) => {
      if (e.relatedTarget instanceof Node && el.contains(e.relatedTarget)) return;
      clearInterval(again);
      share("", {});
    };
    el.addEventListener("focusin", onIn);
    el.addEventListener("focusout", onOut);
    return () => {
      clearInterval(again);
      clearTimeout(timer.current);
      el.removeEventListener("focusin", onIn);
      el.removeEventListener("focusout", onOut);
    };
  }, [form.current]);

  const actions = (canSubmit: boolean, submit: () => void) => (
    <div class="actions">
      <button class="primary" disabled={busy || !canSubmit} onClick={submit}>
        Answer
      </button>
      <button class="quiet" disabled={busy} onClick={onDiscard}>
        Discard…
      </button>
    </div>
  );

  if (c.method === "confirm") {
    return (
      <div class="actions" ref={form}>
        <button class="primary" disabled={busy} onClick={() => onAnswer({ yes: true })}>
          Yes
        </button>
        <button disabled={busy} onClick={() => onAnswer({ yes: false })}>
          No
        </button>
        <button class="quiet" disabled={busy} onClick={onDiscard}>
          Discard…
        </button>
      </div>
    );
  }

  const written = (multiline: boolean, placeholder?: string) =>
    multiline ? (
      <textarea
        class="written"
        aria-label="Written answer"
        rows={c.method === "editor" ? 8 : 3}
        value={text}
        placeholder={placeholder}
        onInput={(e) => setText(e.currentTarget.value)}
      />
    ) : (
      <input
        class="written"
        aria-label="Written answer"
        value={text}
        placeholder={placeholder}
        onInput={(e) => setText(e.currentTarget.value)}
      />
    );

  if (c.method === "input")
    return (
      <div class="card-form" ref={form}>
        {written(false, c.placeholder)}
        {actions(!!text.trim(), () => onAnswer({ text }))}
      </div>
    );
  if (c.method === "editor")
    return (
      <div class="card-form" ref={form}>
        {written(true)}
        {actions(!!text.trim(), () => onAnswer({ text }))}
      </div>
    );

  if (c.method === "select") {
    return (
      <div class="card-form" ref={form}>
        <div class="options" role="radiogroup">
          {(c.choices ?? []).map((choice) => (
            <label class={"option" + (picked[0] === choice && !writing ? " picked" : "")} key={choice}>
              <input
                type="radio"
                name={name}
                checked={picked[0] === choice && !writing}
                onChange={() => (setPicked([choice]), setWriting(false))}
              />
              <span class="option-label">{choice}</span>
            </label>
          ))}
          <WriteToggle writing={writing} onToggle={setWriting} />
        </div>
        {writing && written(true, "Write your answer")}
        {actions(writing ? !!text.trim() : picked.length === 1, () =>
          onAnswer(writing ? { text } : { choice: picked[0] }),
        )}
      </div>
    );
  }

  // questionnaire
  const q: Question | undefined = c.params?.questions?.[d.index];
  if (!q) return null;
  const multi = !!q.multiSelect;
  const toggle = (label: string) => {
    setWriting(false);
    setPicked((p) => (multi ? (p.includes(label) ? p.filter((x) => x !== label) : [...p, label]) : [label]));
  };
  return (
    <div class="card-form" ref={form}>
      <div class="options" role={multi ? "group" : "radiogroup"}>
        {q.options.map((o) => {
          const on = picked.includes(o.label) && !writing;
          return (
            <div class={"option-wrap" + (on ? " picked" : "")} key={o.label}>
              <label class="option">
                <input type={multi ? "checkbox" : "radio"} name={name} checked={on} onChange={() => toggle(o.label)} />
                <span class="option-text">
                  <span class="option-label">{o.label}</span>
                  {o.description && (
                    <span
                      class={"option-desc" + (o.description.includes("\n") ? " prose" : "")}
                      dangerouslySetInnerHTML={{
                        __html: o.description.includes("\n") ? renderChat(o.description) : renderInline(o.description),
                      }}
                    />
                  )}
                </span>
              </label>
              {o.preview && (
                <div
                  class="option-preview prose"
                  role="group"
                  aria-label={`Preview of ${o.label}`}
                  dangerouslySetInnerHTML={{ __html: renderChat(o.preview) }}
                />
              )}
            </div>
          );
        })}
        <WriteToggle writing={writing} onToggle={(w) => (setWriting(w), w && setPicked([]))} />
      </div>
      {writing && written(true, "Write your answer")}
      {actions(writing ? !!text.trim() : picked.length > 0, () => onAnswer(writing ? { text } : { labels: picked }))}
    </div>
  );
}

function WriteToggle({ writing, onToggle }: { writing: boolean; onToggle: (w: boolean) => void }) {
  return (
    <label class={"option write-own" + (writing ? " picked" : "")}>
      <input type="checkbox" checked={writing} onChange={(e) => onToggle(e.currentTarget.checked)} />
      <span class="option-label">Write my own answer</span>
    </label>
  );
}
