// Comment threads on passages of the Plan (docs/room-protocol.md,
// "Comments"): select text and choose Comment (the button by the selection,
// or Ctrl/Cmd+Alt+M); the thread opens beside the passage (a bottom sheet
// on a narrow screen). Open threads wash their passage and mark its first
// line in the margin; hovering previews a thread, clicking pins it with
// Reply, Accept and Dismiss; Escape closes it; one is open at a time.
// Others typing a reply show live. Orphaned threads (their text deleted)
// stay reachable from a count above the editor. An accepted thread's
// <Comment id="..." /> line shows its record in the editor and in Preview.
//
// The marks are a CodeMirror field that maps them through every change, as
// the server maps its anchors; the server's positions are taken again from
// each comment:sync and comment:thread.

import { render } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { EditorState, StateEffect, StateField, type Extension } from "@codemirror/state";
import {
  Decoration,
  EditorView,
  ViewPlugin,
  WidgetType,
  keymap,
  type DecorationSet,
  type ViewUpdate,
} from "@codemirror/view";
import { api } from "../api";
import { RoomError, type RoomSocket } from "../room";
import { protectLines, type PlanSync } from "../plansync";
import type { BlockRef, ClientFrame, ServerFrame, Thread } from "../protocol";
import type { WorkspaceCtx } from "./context";
import { acceptWords } from "./refusals";
import "./comments.css";

export const commentLine = /^<Comment id="([^"]*)" \/>$/;

// ---- The editor's marks

interface Mark {
  id: string;
  from: number;
  to: number;
}

// setMarks places marks: all of them (replacing every mark) or some
// (replacing those threads' marks and keeping the rest).
const setMarks = StateEffect.define<{ all: boolean; marks: Mark[]; drop: string[] }>();
const threadsChanged = StateEffect.define<null>();

const washField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    // Mapped, a wash whose text was all deleted goes; its margin marker
    // goes with it.
    if (tr.docChanged) deco = build(tr.state, collect(deco.map(tr.changes)));
    for (const e of tr.effects) {
      if (!e.is(setMarks)) continue;
      const gone = new Set([...e.value.drop, ...e.value.marks.map((m) => m.id)]);
      const keep = e.value.all ? [] : collect(deco).filter((m) => !gone.has(m.id));
      deco = build(tr.state, [...keep, ...e.value.marks]);
    }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

function collect(deco: DecorationSet): Mark[] {
  const out: Mark[] = [];
  deco.between(0, Number.MAX_SAFE_INTEGER, (from, to, d) => {
    const id = d.spec.thread as string | undefined;
    if (id && d.spec.wash) out.push({ id, from, to });
  });
  return out;
}

function build(state: EditorState, marks: Mark[]): DecorationSet {
  const ranges = [];
  const len = state.doc.length;
  for (const m of marks) {
    const from = Math.max(0, Math.min(m.from, len));
    const to = Math.max(0, Math.min(m.to, len));
    if (to <= from) continue;
    ranges.push(
      Decoration.mark({
        class: "cm-comment-wash",
        attributes: { "data-thread": m.id },
        thread: m.id,
        wash: true,
      }).range(from, to),
    );
    ranges.push(
      Decoration.line({ class: "cm-comment-line", attributes: { "data-thread-line": m.id }, thread: m.id }).range(
        state.doc.lineAt(from).from,
      ),
    );
  }
  return Decoration.set(ranges, true);
}

// markOf is where a thread's wash is in the editor now.
export function markOf(view: EditorView, id: string): Mark | null {
  return collect(view.state.field(washField, false) ?? Decoration.none).find((m) => m.id === id) ?? null;
}

class RecordWidget extends WidgetType {
  constructor(readonly text: string) {
    super();
  }
  eq(o: RecordWidget) {
    return o.text === this.text;
  }
  toDOM() {
    const el = document.createElement("span");
    el.className = "cm-comment-record";
    el.textContent = this.text;
    return el;
  }
}

// ---- The threads of one document

export class Comments {
  threads: Thread[] = [];
  typing = new Map<string, { name: string; until: number }>();
  private listeners = new Set<() => void>();
  private offs: (() => void)[] = [];
  private syncWanted = false;
  private syncSent = false;
  private lastTyping = 0;
  onCompose: (() => void) | null = null;

  constructor(
    private channel: string,
    private socket: RoomSocket,
    private plan: PlanSync,
  ) {
    this.offs.push(socket.on((f) => this.handle(f)));
    this.offs.push(plan.addExtension(this.extension()));
    this.offs.push(
      plan.onStatus((s) => {
        if (s.ready && this.syncWanted && !this.syncSent) this.requestSync();
      }),
    );
  }

  destroy() {
    this.offs.forEach((off) => off());
  }

  on(l: () => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit() {
    this.listeners.forEach((l) => l());
  }

  thread(id: string): Thread | undefined {
    return this.threads.find((t) => t.id === id);
  }

  private handle(f: ServerFrame) {
    switch (f.type) {
      case "comment:sync":
        this.syncSent = false;
        this.threads = f.threads;
        this.place(f.threads, true);
        this.emit();
        return;
      case "comment:thread": {
        const i = this.threads.findIndex((t) => t.id === f.thread.id);
        this.threads = i < 0 ? [...this.threads, f.thread] : this.threads.map((t, j) => (j === i ? f.thread : t));
        this.place([f.thread], false);
        this.emit();
        return;
      }
      case "comment:typing":
        this.typing.set(f.thread, { name: f.name || f.login, until: Date.now() + 4000 });
        this.emit();
        setTimeout(() => this.emit(), 4100);
        return;
      case "plan:snapshot":
        // The editor was reset: its marks with it.
        this.requestSync();
        return;
    }
  }

  // place puts the threads' marks where the server says, in this tab's
  // text; a tab not yet at the server's version asks again once it is.
  private place(threads: Thread[], all: boolean) {
    const marks: Mark[] = [];
    const drop: string[] = [];
    for (const t of threads) {
      if (t.status !== "open" || t.passage.state === "orphaned") {
        drop.push(t.id);
        continue;
      }
      const from = this.plan.fromServer(t.passage.version, t.passage.from, 1);
      const to = this.plan.fromServer(t.passage.version, t.passage.to, -1);
      if (from == null || to == null) {
        this.syncWanted = true;
        if (this.plan.status().ready) this.requestSync();
        continue;
      }
      marks.push({ id: t.id, from, to });
    }
    this.plan.view.dispatch({ effects: [setMarks.of({ all, marks, drop }), threadsChanged.of(null)] });
  }

  private requestSync() {
    this.syncWanted = false;
    this.syncSent = this.socket.send({ type: "comment:sync", id: this.socket.nextID("comments") });
  }

  // typingIn is who else is writing in a thread now.
  typingIn(id: string): string[] {
    const now = Date.now();
    const out: string[] = [];
    for (const [thread, t] of this.typing) if (thread === id && t.until > now) out.push(t.name);
    return out;
  }

  sendTyping(id: string) {
    if (Date.now() - this.lastTyping < 2000) return;
    this.lastTyping = Date.now();
    this.socket.send({ type: "comment:typing", thread: id });
  }

  // start opens a thread on [from, to) of the editor's text with its first
  // note, once this tab's edits are all saved, and returns its id.
  async start(from: number, to: number, text: string): Promise<string> {
    for (let attempt = 0; attempt < 5; attempt++) {
      await this.settled();
      const version = this.plan.status().version;
      const outline = await api<{ version: number; blocks: { index: number; startLine: number; endLine: number }[] }>(
        "GET",
        `/api/channels/${this.channel}/plan`,
      );
      if (outline.version !== version || this.plan.status().unsent) {
        await sleep(150);
        continue;
      }
      const doc = this.plan.view.state.doc;
      const first = doc.lineAt(from).number;
      const last = doc.lineAt(Math.max(from, to - 1)).number;
      const holding = (line: number) => outline.blocks.find((b) => b.startLine <= line && line <= b.endLine);
      const blocks: BlockRef[] = [];
      for (const b of [holding(first), holding(last)]) {
        if (!b || blocks.some((x) => x.index === b.index)) continue;
        blocks.push({
          index: b.index,
          digest: await digest(doc.sliceString(doc.line(b.startLine).from, doc.line(b.endLine).to)),
        });
      }
      try {
        return await this.startRequest({
          type: "comment:start",
          version,
          blocks,
          from,
          to,
          quote: doc.sliceString(from, to),
          text,
        });
      } catch (e) {
        if (e instanceof RoomError && e.code === "stale-version") continue;
        throw e;
      }
    }
    throw new RoomError("stale-version", "The plan kept changing; select the passage again.");
  }

  private settled(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new RoomError("unsaved", "Your edits are not saved yet; try again once they are."));
      }, 10000);
      const off = this.plan.onStatus((s) => {
        if (s.ready && !s.unsent) {
          clearTimeout(timer);
          queueMicrotask(() => off());
          resolve();
        }
      });
    });
  }

  private startRequest(f: ClientFrame & { type: "comment:start" }): Promise<string> {
    const id = this.socket.nextID("comment");
    return new Promise((resolve, reject) => {
      const off = this.socket.on((r) => {
        if (r.type === "comment:started" && r.id === id) {
          off();
          resolve(r.thread);
        } else if (r.type === "error" && r.id === id) {
          off();
          reject(new RoomError(r.code, r.message));
        }
      });
      if (!this.socket.send({ ...f, id })) {
        off();
        reject(new RoomError("offline", "Not connected to Chopin; try again once the connection is back."));
      }
    });
  }

  reply(thread: string, text: string) {
    return this.socket.request({ type: "comment:reply", thread, text });
  }

  act(thread: string, action: "accept" | "dismiss") {
    return this.socket.request({ type: action === "accept" ? "comment:accept" : "comment:dismiss", thread });
  }

  // recordText is the compact record an accepted thread's line shows.
  recordText(id: string): string {
    const t = this.thread(id);
    if (!t) return "Accepted comment (not loaded yet)";
    return `Accepted comment · ${t.decidedBy ?? ""} · “${clip(t.passage.quote, 60)}” · ${resultWords(t)}`;
  }

  private extension(): Extension {
    const self = this;
    return [
      washField,
      keymap.of([
        {
          key: "Mod-Alt-m",
          run: () => {
            self.onCompose?.();
            return true;
          },
        },
      ]),
      // <Comment> lines are the server's: the editor does not let them change.
      protectLines(commentLine),
      ViewPlugin.fromClass(
        class {
          decorations: DecorationSet;
          constructor(view: EditorView) {
            this.decorations = this.build(view);
          }
          update(u: ViewUpdate) {
            if (
              u.docChanged ||
              u.viewportChanged ||
              u.transactions.some((t) => t.effects.some((e) => e.is(threadsChanged)))
            )
              this.decorations = this.build(u.view);
          }
          build(view: EditorView) {
            const ranges = [];
            for (const { from, to } of view.visibleRanges) {
              for (let pos = from; pos <= to;) {
                const line = view.state.doc.lineAt(pos);
                const m = commentLine.exec(line.text);
                if (m) {
                  ranges.push(Decoration.line({ class: "cm-comment-record-line" }).range(line.from));
                  ranges.push(
                    Decoration.widget({ widget: new RecordWidget(self.recordText(m[1])), side: 1 }).range(line.to),
                  );
                }
                pos = line.to + 1;
              }
            }
            return Decoration.set(ranges, true);
          }
        },
        { decorations: (v) => v.decorations },
      ),
    ];
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function digest(text: string): Promise<string> {
  const sum = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return "sha256:" + Array.from(new Uint8Array(sum), (b) => b.toString(16).padStart(2, "0")).join("");
}

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

function resultWords(t: Thread): string {
  switch (t.result?.state) {
    case "revising":
      return "the Planner is revising it";
    case "revised":
      return "revised by the Planner";
    case "unrevised":
      return "the Planner changed nothing";
    case "no-planner":
      return "not revised: no Planner was attached";
    default:
      return "";
  }
}

const time = (ms?: number) =>
  ms ? new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "";

const controllers = new WeakMap<PlanSync, Comments>();

// commentsFor is the document's Comments, made once per editor.
export function commentsFor(ctx: WorkspaceCtx): Comments {
  let c = controllers.get(ctx.plan);
  if (!c) {
    c = new Comments(ctx.state.channel.id, ctx.socket, ctx.plan);
    controllers.set(ctx.plan, c);
  }
  return c;
}

// ---- The layer over the Plan

interface Draft {
  from: number;
  to: number;
}

export function CommentsLayer({ ctx, mode }: { ctx: WorkspaceCtx; mode: "edit" | "read" }) {
  const comments = commentsFor(ctx);
  const view = ctx.plan.view;
  const [, setTick] = useState(0);
  const [pinned, setPinned] = useState<string | null>(null);
  const [hover, setHover] = useState<string | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [selection, setSelection] = useState<Draft | null>(null);
  const [showOrphans, setShowOrphans] = useState(false);
  const layer = useRef<HTMLDivElement>(null);
  const rerender = () => setTick((n) => n + 1);

  useEffect(() => comments.on(rerender), [comments]);

  // The selection, for the Comment button; scrolling moves the cards.
  useEffect(() => {
    const onSel = () => {
      const r = view.state.selection.main;
      setSelection(r.empty || !view.hasFocus ? null : { from: r.from, to: r.to });
    };
    const off = ctx.plan.addExtension(
      EditorView.updateListener.of((u) => {
        if (u.selectionSet || u.focusChanged || u.docChanged) onSel();
        if (u.docChanged || u.geometryChanged) rerender();
      }),
    );
    view.scrollDOM.addEventListener("scroll", rerender);
    return () => {
      off();
      view.scrollDOM.removeEventListener("scroll", rerender);
    };
  }, [view]);

  const [notice, setNotice] = useState("");
  const [previewSel, setPreviewSel] = useState<{ text: string; top: number } | null>(null);
  const [draftTop, setDraftTop] = useState(48); // where a draft from Preview opens
  const compose = () => {
    if (!ctx.state.canEdit) return;
    if (mode === "read") {
      composeFromPreview();
      return;
    }
    const r = view.state.selection.main;
    const t = trim(view.state.doc.sliceString(r.from, r.to), r.from);
    if (!t) return;
    setPinned(null);
    setNotice("");
    setDraft(t);
  };
  comments.onCompose = compose;

  // In Preview, the selected text is found in the source: where it reads
  // the same once, that is the passage; otherwise the editor is the place.
  const composeFromPreview = () => {
    const text = (previewSel?.text ?? document.getSelection()?.toString() ?? "").trim();
    if (!text) return;
    const source = view.state.doc.toString();
    const at = source.indexOf(text);
    if (at < 0 || source.indexOf(text, at + 1) >= 0) {
      setNotice(
        at < 0
          ? "This passage reads differently in the plan's source (formatting, or more than one block). Select it in Edit to comment on it."
          : "This text occurs more than once in the plan. Select it in Edit to comment on the right one.",
      );
      return;
    }
    setPinned(null);
    setNotice("");
    setDraftTop(previewSel?.top ?? 48);
    setDraft({ from: at, to: at + text.length });
  };

  useEffect(() => {
    if (mode !== "read") {
      setPreviewSel(null);
      return;
    }
    const onSel = () => {
      const sel = document.getSelection();
      const host = layer.current?.parentElement;
      const pv = host?.querySelector(".plan-view");
      // A triple click ends the selection just past its paragraph: one
      // end inside the view is enough.
      if (!sel || sel.isCollapsed || !pv || !host || !(pv.contains(sel.anchorNode) || pv.contains(sel.focusNode))) {
        setPreviewSel(null);
        return;
      }
      const rect = sel.getRangeAt(0).getBoundingClientRect();
      setPreviewSel({ text: sel.toString(), top: Math.max(40, rect.top - host.getBoundingClientRect().top - 8) });
    };
    const key = (e: KeyboardEvent) => {
      if (e.key.toLowerCase() === "m" && e.altKey && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        compose();
      }
    };
    document.addEventListener("selectionchange", onSel);
    document.addEventListener("keydown", key);
    return () => {
      document.removeEventListener("selectionchange", onSel);
      document.removeEventListener("keydown", key);
    };
  }, [mode, previewSel]);

  // Hover previews; a click pins; the margin marker pins too.
  useEffect(() => {
    const over = (e: MouseEvent) => {
      const el = (e.target as HTMLElement).closest<HTMLElement>("[data-thread]");
      setHover(el ? el.dataset.thread! : null);
    };
    const click = (e: MouseEvent) => {
      const target = e.target as HTMLElement;
      const wash = target.closest<HTMLElement>("[data-thread]");
      const line = target.closest<HTMLElement>("[data-thread-line]");
      if (wash && view.state.selection.main.empty) setPinned(wash.dataset.thread!);
      else if (line && e.clientX < line.getBoundingClientRect().left + 2) setPinned(line.dataset.threadLine!);
    };
    const leave = () => setHover(null);
    view.contentDOM.addEventListener("mouseover", over);
    view.contentDOM.addEventListener("mouseleave", leave);
    view.contentDOM.addEventListener("click", click);
    return () => {
      view.contentDOM.removeEventListener("mouseleave", leave);
      view.contentDOM.removeEventListener("mouseover", over);
      view.contentDOM.removeEventListener("click", click);
    };
  }, [view]);

  // Attached as the card shows, so Escape right after opening closes it.
  useLayoutEffect(() => {
    if (!pinned && !draft) return;
    const key = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        setPinned(null);
        setDraft(null);
      }
    };
    document.addEventListener("keydown", key);
    return () => document.removeEventListener("keydown", key);
  }, [pinned, draft]);

  // Preview: the records of accepted threads in their slots.
  useEffect(() => {
    if (mode !== "read") return;
    const fill = () =>
      document.querySelectorAll<HTMLElement>(".plan-view .comment-record-slot").forEach((el) => {
        const t = comments.thread(el.dataset.comment ?? "");
        render(t ? <Record t={t} /> : <span class="muted small">An accepted comment, not loaded yet.</span>, el);
      });
    fill();
    const root = document.querySelector(".plan-view");
    const obs = new MutationObserver(() => {
      obs.disconnect();
      fill();
      if (root) obs.observe(root, { childList: true, subtree: true });
    });
    if (root) obs.observe(root, { childList: true, subtree: true });
    const off = comments.on(fill);
    return () => {
      obs.disconnect();
      off();
    };
  }, [mode, comments]);

  const orphans = comments.threads.filter((t) => t.status === "open" && t.passage.state === "orphaned");
  const shown = draft ? null : (pinned ?? hover);
  const thread = shown ? comments.thread(shown) : undefined;

  // Where a card goes: beside its passage, or at the top for an orphan.
  const topOf = (from: number | null): number => {
    const host = layer.current?.parentElement;
    if (from == null || !host) return 48;
    const c = view.coordsAtPos(from);
    if (!c) return 48;
    return Math.max(40, c.top - host.getBoundingClientRect().top - 8);
  };

  const mark = thread ? markOf(view, thread.id) : null;
  const selTop =
    !ctx.state.canEdit || draft
      ? null
      : mode === "edit"
        ? selection && topOf(selection.from)
        : previewSel && previewSel.top;

  return (
    <div class="comments-layer" ref={layer}>
      {orphans.length > 0 && (
        <div class="comments-orphans">
          <button class="quiet small" aria-expanded={showOrphans} onClick={() => setShowOrphans(!showOrphans)}>
            {orphans.length} orphaned {orphans.length === 1 ? "comment" : "comments"}
          </button>
          {showOrphans && (
            <ul class="comments-orphan-list">
              {orphans.map((t) => (
                <li key={t.id}>
                  <button
                    class="link"
                    onClick={() => {
                      setPinned(t.id);
                      setShowOrphans(false);
                    }}
                  >
                    “{clip(t.passage.quote, 50)}” · {t.notes.length} {t.notes.length === 1 ? "note" : "notes"}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {selTop != null && (
        <button
          class="comment-add"
          style={{ top: `${selTop}px` }}
          title="Comment on the selection (Ctrl+Alt+M)"
          onMouseDown={(e) => e.preventDefault()}
          onClick={compose}
        >
          Comment
        </button>
      )}
      {notice && (
        <p class="comment-card comment-notice" role="alert" style={{ top: `${selTop ?? 48}px` }}>
          {notice}{" "}
          <button class="quiet small" onClick={() => setNotice("")}>
            Close
          </button>
        </p>
      )}
      {draft && (
        <NewThreadCard
          comments={comments}
          draft={draft}
          quote={view.state.doc.sliceString(draft.from, draft.to)}
          top={mode === "read" ? draftTop : topOf(draft.from)}
          onDone={(id) => {
            setDraft(null);
            if (id) setPinned(id);
          }}
        />
      )}
      {thread && (mode === "edit" || pinned === thread.id) && (
        <ThreadCard
          key={thread.id}
          ctx={ctx}
          comments={comments}
          t={thread}
          pinned={pinned === thread.id}
          top={topOf(mark ? mark.from : null)}
          onPin={() => setPinned(thread.id)}
          onClose={() => {
            setPinned(null);
            setHover(null);
          }}
        />
      )}
    </div>
  );
}

// trim is the selection without the blank space at its ends.
function trim(text: string, from: number): Draft | null {
  const lead = text.length - text.trimStart().length;
  const body = text.trim();
  if (!body) return null;
  return { from: from + lead, to: from + lead + body.length };
}

function NewThreadCard({
  comments,
  draft,
  quote,
  top,
  onDone,
}: {
  comments: Comments;
  draft: Draft;
  quote: string;
  top: number;
  onDone: (id: string | null) => void;
}) {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  useLayoutEffect(() => area.current?.focus(), []);
  const submit = async () => {
    if (!text.trim() || busy) return;
    setBusy(true);
    setError("");
    try {
      onDone(await comments.start(draft.from, draft.to, text));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setBusy(false);
    }
  };
  return (
    <section class="comment-card pinned" style={{ top: `${top}px` }} aria-label="New comment">
      <blockquote class="comment-quote">{clip(quote, 240)}</blockquote>
      <textarea
        ref={area}
        aria-label="Comment"
        placeholder="Say what should change…"
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) submit();
        }}
      />
      {error && (
        <p class="comment-error" role="alert">
          {error}
        </p>
      )}
      <div class="comment-actions">
        <button class="primary" disabled={!text.trim() || busy} onClick={submit}>
          Comment
        </button>
        <button class="quiet" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </section>
  );
}

function ThreadCard({
  ctx,
  comments,
  t,
  pinned,
  top,
  onPin,
  onClose,
}: {
  ctx: WorkspaceCtx;
  comments: Comments;
  t: Thread;
  pinned: boolean;
  top: number;
  onPin: () => void;
  onClose: () => void;
}) {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const typing = comments.typingIn(t.id);
  const run = async (fn: () => Promise<unknown>, after?: () => void) => {
    setBusy(true);
    setError("");
    try {
      await fn();
      after?.();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const open = t.status === "open";
  const canAct = open && ctx.state.canEdit;
  const waits = acceptWords(ctx.state.planner);
  return (
    <section
      class={"comment-card" + (pinned ? " pinned" : " preview")}
      style={{ top: `${top}px` }}
      aria-label="Comment thread"
      data-thread-card={t.id}
      onClick={() => !pinned && onPin()}
    >
      <header class="comment-head">
        <span class="badge">
          {t.status === "open" ? "Comment" : t.status === "accepted" ? "Accepted" : "Dismissed"}
        </span>
        {t.passage.state === "changed" && <span class="muted small">The text changed since this comment.</span>}
        {t.passage.state === "orphaned" && (
          <span class="muted small">The commented text was deleted; this thread has no place in the plan.</span>
        )}
        <span class="spacer" />
        {pinned && (
          <button class="quiet" aria-label="Close comment" onClick={onClose}>
            ×
          </button>
        )}
      </header>
      <blockquote class="comment-quote">{clip(t.passage.quote, 240)}</blockquote>
      <ol class="comment-notes">
        {t.notes.map((n) => (
          <li key={n.id}>
            <div class="comment-note-head">
              <strong>{n.author}</strong> <span class="muted small">{time(n.createdAt)}</span>
            </div>
            <div class="comment-note-text">{n.text}</div>
          </li>
        ))}
      </ol>
      {typing.length > 0 && (
        <p class="comment-typing muted small" role="status">
          {typing.join(", ")} {typing.length === 1 ? "is" : "are"} writing a reply…
        </p>
      )}
      {t.status !== "open" && <Record t={t} />}
      {pinned && canAct && (
        <>
          <textarea
            aria-label="Reply"
            placeholder="Reply…"
            value={text}
            onInput={(e) => {
              setText((e.target as HTMLTextAreaElement).value);
              comments.sendTyping(t.id);
            }}
          />
          {error && (
            <p class="comment-error" role="alert">
              {error}
            </p>
          )}
          {waits && (
            <div class="no-planner small comment-waits" role="status">
              <p>{waits}</p>
              <button type="button" class="small" onClick={ctx.connect} aria-haspopup="dialog">
                Connect a Planner
              </button>
            </div>
          )}
          <div class="comment-actions">
            <button
              class="primary"
              disabled={!text.trim() || busy}
              onClick={() =>
                run(
                  () => comments.reply(t.id, text),
                  () => setText(""),
                )
              }
            >
              Reply
            </button>
            <button
              disabled={busy || !!waits}
              title="Record the decision and ask the Planner to revise this passage"
              onClick={() => run(() => comments.act(t.id, "accept"))}
            >
              Accept
            </button>
            <button class="quiet" disabled={busy} onClick={() => run(() => comments.act(t.id, "dismiss"), onClose)}>
              Dismiss
            </button>
          </div>
        </>
      )}
    </section>
  );
}

// Record is an accepted or dismissed thread's decision and result.
function Record({ t }: { t: Thread }) {
  if (t.status === "dismissed")
    return (
      <p class="comment-record muted small">
        Dismissed by {t.decidedBy} · {time(t.decidedAt)}
      </p>
    );
  const r = t.result;
  return (
    <div class="comment-record" data-record={t.id}>
      <div class="small">
        <strong>Accepted comment</strong> · by {t.decidedBy} · {time(t.decidedAt)}
      </div>
      <blockquote class="comment-quote">{clip(t.passage.quote, 240)}</blockquote>
      {r?.state === "revising" && <p class="small">The Planner is revising this passage…</p>}
      {r?.state === "revised" && (
        <>
          <p class="small">Revised by the Planner:</p>
          <pre class="comment-result">
            {r.blocks}
            {r.cut ? "\n…" : ""}
          </pre>
        </>
      )}
      {r?.state === "unrevised" && <p class="small">The Planner changed nothing.</p>}
      {r?.state === "no-planner" && <p class="small comment-noplanner">{r.message}</p>}
    </div>
  );
}
