// The Plan's live sync over the room socket, as docs/room-protocol.md says
// and as @codemirror/collab intends (app/convergence_test.go plays the same
// client in Go against the real server):
//
//   - plan:open with the epoch and version held, on every (re)connect;
//   - one plan:push at a time of sendableUpdates, and not again until the
//     server has confirmed (plan:updates with our clientID) or refused it;
//   - plan:updates go through receiveUpdates, which rebases the outbox;
//   - a stale push pushes again once it has the updates that made it stale,
//     which come before the refusal; a tab that missed one re-opens;
//   - a snapshot of another history resets the editor, re-applying the
//     outbox when the text it was based on is unchanged, else keeping the
//     local text aside for the person to copy.
//
// The outbox, with the text it applies to, is kept in localStorage per tab
// (keyed by collab clientID), so a closed tab loses nothing: the next tab to
// open the document adopts an outbox whose tab is gone.

import { ChangeSet, Compartment, EditorState, Text, Transaction, type Extension } from "@codemirror/state";
import { EditorView, drawSelection, highlightActiveLine, keymap, placeholder } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { editorKeys } from "./editorkeys";
import { planLanguage } from "./editormarkdown";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { tags as t } from "@lezer/highlight";
import { collab, getSyncedVersion, receiveUpdates, sendableUpdates, getClientID } from "@codemirror/collab";
import type { RoomSocket } from "./room";
import { decisionChips, decisionLine, keepDecisionLines, refreshChips, type ChipInfo } from "./decisionchip";

export { decisionLine };
import type { ServerFrame, Update } from "./protocol";
import {
  addMarks,
  clearMarks,
  diffBlocks,
  mapMark,
  marksField,
  plannerClientID,
  plannerMarks,
  type ChangeMark,
} from "./workspace/changes";

export interface SyncStatus {
  ready: boolean;
  unsent: number; // local updates not yet confirmed
  version: number;
  notice?: string; // a refusal in the server's words
  stranded?: string; // local text that could not be re-applied
}

// maxPushUpdates is the most updates the server takes in one plan:push
// (room.MaxPushUpdates, docs/room-protocol.md).
const maxPushUpdates = 500;

interface StoredOutbox {
  clientID: string;
  epoch: string;
  version: number;
  base: string; // the server's text at version
  updates: unknown[]; // ChangeSet JSON, in order
}

const ALIVE_MS = 15000;
const outboxPrefix = (channel: string) => `chopin:outbox:${channel}:`;

function randomID(): string {
  const a = new Uint8Array(9);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(36).padStart(2, "0"))
    .join("")
    .slice(0, 14);
}

function load(key: string): StoredOutbox | null {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as StoredOutbox) : null;
  } catch {
    return null;
  }
}

// adoptOutbox finds this tab's own outbox (same session), else one left by
// a tab that is gone.
function adoptOutbox(channel: string): { clientID: string; stored: StoredOutbox | null } {
  const tabKey = "chopin:client:" + channel;
  let clientID = sessionStorage.getItem(tabKey);
  let stored = clientID ? load(outboxPrefix(channel) + clientID) : null;
  if (!stored) {
    const now = Date.now();
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(outboxPrefix(channel)) || key.endsWith(":alive")) continue;
      const alive = Number(localStorage.getItem(key + ":alive") || 0);
      if (now - alive < ALIVE_MS) continue;
      const s = load(key);
      if (s && s.updates.length) {
        stored = s;
        clientID = s.clientID;
        localStorage.setItem(key + ":alive", String(now));
        break;
      }
    }
  }
  if (!clientID) clientID = randomID();
  sessionStorage.setItem(tabKey, clientID);
  return { clientID, stored };
}

// Markdown source, quietly: structure by weight, not by colour. The colours
// are theme.css variables, so the editor follows the light or dark theme.
const planHighlight = HighlightStyle.define([
  { tag: t.heading1, fontWeight: "700", fontSize: "1.2em" },
  { tag: [t.heading2, t.heading3, t.heading4, t.heading5, t.heading6], fontWeight: "700" },
  { tag: t.strong, fontWeight: "700" },
  { tag: t.emphasis, fontStyle: "italic" },
  { tag: t.strikethrough, textDecoration: "line-through" },
  { tag: [t.link, t.url], color: "var(--accent)" },
  { tag: [t.processingInstruction, t.meta, t.contentSeparator], color: "var(--hl-comment)" },
  { tag: t.monospace, color: "var(--hl-keyword)" },
  { tag: t.quote, color: "var(--ink-2)" },
  { tag: [t.angleBracket, t.tagName, t.attributeName, t.attributeValue], color: "var(--hl-type)" },
  { tag: t.keyword, color: "var(--hl-keyword)" },
  { tag: t.string, color: "var(--hl-string)" },
  { tag: t.comment, color: "var(--hl-comment)", fontStyle: "italic" },
]);

const editorTheme = EditorView.theme({
  "&": { height: "100%", fontSize: "15px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.65", padding: "24px 0 40vh" },
  ".cm-content": { maxWidth: "78ch", margin: "0 auto", padding: "0 28px", caretColor: "var(--ink)" },
  ".cm-line": { padding: "0" },
  "&.cm-focused": { outline: "none" },
  ".cm-activeLine": { backgroundColor: "transparent" },
  "&.cm-focused .cm-activeLine": { backgroundColor: "var(--active-line)" },
  ".cm-decision-line": { color: "var(--muted)", backgroundColor: "var(--decision-line)" },
});

export class PlanSync {
  readonly view: EditorView;
  readonly clientID: string;
  private epoch = "";
  private confirmed: Text | null = null; // the server's text at the synced version
  private ready = false;
  private openID = "";
  private inFlight = "";
  private pushed = 0;
  private waitFor = 0;
  private canEdit = true;
  private notice: string | undefined;
  private stranded: string | undefined;
  private editable = new Compartment();
  private extra = new Compartment(); // what other parts add to the editor (addExtension)
  private extraExts: Extension[] = [];
  private listeners = new Set<(s: SyncStatus) => void>();
  private docListeners = new Set<(doc: Text) => void>();
  private markListeners = new Set<(marks: readonly ChangeMark[]) => void>();
  private saveTimer: number | undefined;
  private aliveTimer: number;
  private offs: (() => void)[] = [];
  private questions = new Map<string, ChipInfo>();
  private markShown: () => void = () => {};

  // shown settles once the editor first holds the server's plan and the
  // browser has painted it (or the server would not open the plan): what
  // can wait for the editor, Chat's history for one, waits for it.
  readonly shown = new Promise<void>((resolve) => {
    let done = false;
    this.markShown = () => {
      if (done) return;
      done = true;
      requestAnimationFrame(() => setTimeout(resolve));
    };
  });

  constructor(
    private channel: string,
    private socket: RoomSocket,
  ) {
    const { clientID, stored } = adoptOutbox(channel);
    this.clientID = clientID;
    this.view = new EditorView({ state: this.makeState("", 0) });
    if (stored) {
      this.epoch = stored.epoch;
      this.ready = true;
      this.reset(
        stored.base,
        stored.version,
        stored.epoch,
        stored.updates.map((u) => ChangeSet.fromJSON(u)),
      );
    }
    this.offs.push(socket.on((f) => this.handle(f)));
    this.offs.push(socket.onState((s) => s === "online" && this.open()));
    if (socket.state === "online") this.open();
    this.aliveTimer = window.setInterval(() => this.markAlive(), 5000);
    addEventListener("pagehide", this.onPageHide);
    addEventListener("pageshow", this.onPageShow);
  }

  destroy() {
    this.flush();
    clearInterval(this.aliveTimer);
    removeEventListener("pagehide", this.onPageHide);
    removeEventListener("pageshow", this.onPageShow);
    this.offs.forEach((off) => off());
    this.view.destroy();
  }

  private makeState(doc: string, version: number): EditorState {
    const exts: Extension[] = [
      collab({ startVersion: version, clientID: this.clientID }),
      history(),
      drawSelection(),
      highlightActiveLine(),
      keymap.of([...defaultKeymap, ...historyKeymap]),
      editorKeys(),
      planLanguage(doc),
      syntaxHighlighting(planHighlight),
      EditorView.lineWrapping,
      editorTheme,
      placeholder("Write the plan in Markdown…"),
      this.editable.of(this.editableExt()),
      this.extra.of(this.extraExts),
      protectDecisionLines,
      decisionChips(() => this.questions),
      plannerMarks,
      EditorView.contentAttributes.of({ "aria-label": "Plan (Markdown)" }),
      EditorView.updateListener.of((u) => {
        const marks = u.state.field(marksField);
        if (marks !== u.startState.field(marksField)) this.markListeners.forEach((l) => l(marks));
        if (!u.docChanged) return;
        this.docListeners.forEach((l) => l(u.state.doc));
        if (u.transactions.some((tr) => !tr.annotation(Transaction.remote))) {
          this.scheduleSave();
          this.push();
          this.emit();
        }
      }),
    ];
    return EditorState.create({ doc, extensions: exts });
  }

  private editableExt(): Extension {
    const on = this.canEdit && this.ready;
    return [EditorState.readOnly.of(!on), EditorView.editable.of(on)];
  }

  // addExtension adds to the editor, now and after every reset (comments'
  // marks, for one).
  addExtension(ext: Extension): () => void {
    this.extraExts = [...this.extraExts, ext];
    this.view.dispatch({ effects: this.extra.reconfigure(this.extraExts) });
    return () => {
      this.extraExts = this.extraExts.filter((e) => e !== ext);
      this.view.dispatch({ effects: this.extra.reconfigure(this.extraExts) });
    };
  }

  // fromServer is position pos of the server's text at version in the
  // editor's text now (through this tab's unsent edits), or null when the
  // editor does not hold that version.
  fromServer(version: number, pos: number, assoc: number): number | null {
    const state = this.view.state;
    if (!this.ready || getSyncedVersion(state) !== version) return null;
    for (const u of sendableUpdates(state)) pos = u.changes.mapPos(pos, assoc);
    return Math.min(pos, state.doc.length);
  }

  setCanEdit(canEdit: boolean) {
    this.canEdit = canEdit;
    this.view.dispatch({ effects: this.editable.reconfigure(this.editableExt()) });
    this.push();
  }

  onStatus(l: (s: SyncStatus) => void): () => void {
    this.listeners.add(l);
    l(this.status());
    return () => this.listeners.delete(l);
  }

  onDoc(l: (doc: Text) => void): () => void {
    this.docListeners.add(l);
    l(this.view.state.doc);
    return () => this.docListeners.delete(l);
  }

  // The Planner's changes marked in this tab (workspace/changes.ts), in
  // the order of the text.
  onMarks(l: (marks: readonly ChangeMark[]) => void): () => void {
    this.markListeners.add(l);
    l(this.view.state.field(marksField));
    return () => this.markListeners.delete(l);
  }

  marks(): readonly ChangeMark[] {
    return this.view.state.field(marksField);
  }

  clearMarks() {
    this.view.dispatch({ effects: clearMarks.of(null) });
  }

  status(): SyncStatus {
    return {
      ready: this.ready,
      unsent: sendableUpdates(this.view.state).length,
      version: getSyncedVersion(this.view.state),
      notice: this.notice,
      stranded: this.stranded,
    };
  }

  dismiss() {
    this.notice = undefined;
    this.stranded = undefined;
    this.emit();
  }

  private emit() {
    const s = this.status();
    this.listeners.forEach((l) => l(s));
  }

  private open() {
    this.inFlight = "";
    this.pushed = 0;
    this.waitFor = 0;
    this.openID = this.socket.nextID("open");
    this.socket.send({
      type: "plan:open",
      id: this.openID,
      epoch: this.epoch,
      version: getSyncedVersion(this.view.state),
    });
  }

  private handle(f: ServerFrame) {
    switch (f.type) {
      case "plan:snapshot":
        if (f.id && f.id === this.openID) {
          this.openID = "";
          this.snapshot(f.epoch, f.version, f.source);
        }
        return;
      case "plan:updates":
        if (this.openID) {
          // Broadcast between joining and the answer to plan:open, which
          // holds these updates too.
          if (f.id !== this.openID) return;
          this.openID = "";
          this.ready = true;
          this.view.dispatch({ effects: this.editable.reconfigure(this.editableExt()) });
          this.markShown();
        }
        this.receive(f.epoch, f.version, f.updates);
        return;
      case "plan:ack":
        if (f.id === this.inFlight) {
          this.inFlight = "";
          this.push();
        }
        return;
      case "error":
        if (f.id && f.id === this.inFlight) {
          this.inFlight = "";
          this.pushed = 0;
          if (f.code === "stale-version") {
            // Nothing was taken. The updates that made it stale come before
            // the refusal; if they did not (this tab missed one), ask for
            // them rather than wait for a broadcast that is not coming.
            this.waitFor = f.version ?? 0;
            if (this.waitFor > getSyncedVersion(this.view.state)) this.open();
            else this.push();
          } else {
            // The server will never take these: go back to its text.
            this.notice = f.message;
            this.reset(this.confirmed?.toString() ?? "", getSyncedVersion(this.view.state), this.epoch, []);
            this.emit();
          }
        } else if (f.id && f.id === this.openID) {
          this.openID = "";
          this.notice = f.message;
          this.emit();
          this.markShown();
        }
        return;
    }
  }

  private snapshot(epoch: string, version: number, source: string) {
    const unsent = sendableUpdates(this.view.state);
    const wasReady = this.ready;
    // Ready from here on, so a new editor state is made editable at once
    // (one reconfiguration fewer on a long plan).
    this.ready = true;
    if (!wasReady || unsent.length === 0) {
      this.reset(source, version, epoch, []);
    } else if (epoch === this.epoch && version === getSyncedVersion(this.view.state)) {
      // Nothing moved: the outbox still applies as it is.
    } else if (this.confirmed && this.confirmed.toString() === source) {
      this.reset(
        source,
        version,
        epoch,
        unsent.map((u) => u.changes),
      );
    } else {
      this.stranded = this.view.state.doc.toString();
      this.notice = `The plan's history was replaced while ${unsent.length} of your edits were unsent. They could not be re-applied; copy your text to bring them back.`;
      this.reset(source, version, epoch, []);
    }
    if (this.view.state.readOnly === (this.canEdit && this.ready))
      this.view.dispatch({ effects: this.editable.reconfigure(this.editableExt()) });
    this.scheduleSave();
    this.emit();
    this.push();
    this.markShown();
  }

  private receive(epoch: string, version: number, wire: Update[]) {
    const synced = getSyncedVersion(this.view.state);
    if (epoch !== this.epoch || version > synced) {
      // Another history, or a gap: ask for what we are missing.
      this.open();
      return;
    }
    const updates = wire
      .slice(synced - version)
      .map((u) => ({ clientID: u.clientID, changes: ChangeSet.fromJSON(u.changes) }));
    if (updates.length === 0) {
      this.emit();
      this.push();
      return;
    }
    let confirmed = this.confirmed ?? Text.empty;
    // The Planner's updates are marked: the blocks each changed, carried
    // through the updates after it.
    let marks: ChangeMark[] = [];
    for (const u of updates) {
      const next = u.changes.apply(confirmed);
      marks = marks.map((m) => mapMark(m, u.changes)).filter((m) => m !== null);
      if (u.clientID === plannerClientID)
        marks.push(...diffBlocks(confirmed.toString(), next.toString()).map((m) => ({ ...m, seq: 0 })));
      confirmed = next;
    }
    this.confirmed = confirmed;
    const before = sendableUpdates(this.view.state).length;
    const tr = receiveUpdates(this.view.state, updates);
    this.view.dispatch(tr);
    if (marks.length) {
      // This tab's own edits not yet confirmed now apply on top.
      for (const mine of sendableUpdates(this.view.state))
        marks = marks.map((m) => mapMark(m, mine.changes)).filter((m) => m !== null);
      this.view.dispatch({ effects: addMarks.of(marks.map(({ kind, from, to }) => ({ kind, from, to }))) });
    }
    const own = before - sendableUpdates(this.view.state).length;
    this.pushed = Math.max(0, this.pushed - own);
    this.scheduleSave();
    this.emit();
    this.push();
  }

  private reset(source: string, version: number, epoch: string, replay: ChangeSet[]) {
    this.epoch = epoch;
    this.confirmed = Text.of(source.split("\n"));
    const old = this.view.state.selection.main;
    let state = this.makeState(source, version);
    for (const changes of replay) {
      try {
        state = state.update({ changes, filter: false }).state;
      } catch {
        break; // an update that no longer fits; the rest depend on it
      }
    }
    const len = state.doc.length;
    state = state.update({ selection: { anchor: Math.min(old.anchor, len), head: Math.min(old.head, len) } }).state;
    this.view.setState(state);
    this.docListeners.forEach((l) => l(state.doc));
    this.markListeners.forEach((l) => l(state.field(marksField)));
  }

  private push() {
    const state = this.view.state;
    const unsent = sendableUpdates(state);
    if (!this.ready || !this.canEdit || this.openID || this.inFlight || this.pushed > 0) return;
    if (getSyncedVersion(state) < this.waitFor || unsent.length === 0) return;
    // The server takes at most maxPushUpdates a push; the rest follow once
    // these are confirmed.
    const batch = unsent.slice(0, maxPushUpdates);
    const id = this.socket.nextID("push");
    const ok = this.socket.send({
      type: "plan:push",
      id,
      version: getSyncedVersion(state),
      updates: batch.map((u) => ({ clientID: u.clientID, changes: u.changes.toJSON() })),
    });
    if (ok) {
      this.inFlight = id;
      this.pushed = batch.length;
    }
  }

  // The outbox on disk.

  private get key() {
    return outboxPrefix(this.channel) + this.clientID;
  }

  private scheduleSave() {
    clearTimeout(this.saveTimer);
    this.saveTimer = window.setTimeout(this.flush, 200);
  }

  // A hidden page may be a closed tab: its outbox is saved and left for the
  // next tab on this document to adopt at once. A page restored from the
  // back-forward cache claims it again.
  private onPageHide = () => {
    this.flush();
    try {
      if (localStorage.getItem(this.key) !== null) localStorage.setItem(this.key + ":alive", "0");
    } catch {
      /* ignore */
    }
  };

  private onPageShow = (e: PageTransitionEvent) => {
    if (e.persisted) this.markAlive();
  };

  private flush = () => {
    clearTimeout(this.saveTimer);
    const state = this.view.state;
    const unsent = sendableUpdates(state);
    try {
      if (unsent.length === 0 || !this.ready) {
        localStorage.removeItem(this.key);
        localStorage.removeItem(this.key + ":alive");
        return;
      }
      const stored: StoredOutbox = {
        clientID: getClientID(state),
        epoch: this.epoch,
        version: getSyncedVersion(state),
        base: (this.confirmed ?? Text.empty).toString(),
        updates: unsent.map((u) => u.changes.toJSON()),
      };
      localStorage.setItem(this.key, JSON.stringify(stored));
      this.markAlive();
    } catch {
      /* storage full or unavailable: the outbox lives in memory only */
    }
  };

  private markAlive() {
    try {
      if (localStorage.getItem(this.key) !== null) localStorage.setItem(this.key + ":alive", String(Date.now()));
    } catch {
      /* ignore */
    }
  }

  // setQuestions gives the chips of the <Decision> lines their questions.
  setQuestions(questions: Map<string, ChipInfo>) {
    this.questions = questions;
    this.view.dispatch({ effects: refreshChips.of(null) });
  }

  // Position of a decision's line, for "show in plan".
  decisionPos(id: string): number | null {
    const doc = this.view.state.doc;
    for (let i = 1; i <= doc.lines; i++) {
      const line = doc.line(i);
      const m = decisionLine.exec(line.text);
      if (m && m[1] === id) return line.from;
    }
    return null;
  }
}

// The <Decision id="..." /> lines are the server's; people may not change
// them (the server refuses it), so the editor does not let them try (and
// shows them as chips, decisionchip.ts).
const protectDecisionLines: Extension = [protectLines(decisionLine), keepDecisionLines];

// protectLines keeps the editor from changing any whole line that line
// matches (a reserved component only the server writes, starting with "<").
export function protectLines(line: RegExp): Extension {
  return EditorState.changeFilter.of((tr) => {
    if (!tr.docChanged) return true;
    const doc = tr.startState.doc;
    const ranges: number[] = [];
    for (let i = 1; i <= doc.lines; i++) {
      const l = doc.line(i);
      if (l.text.charCodeAt(0) === 60 && line.test(l.text)) ranges.push(l.from, l.to);
    }
    return ranges.length ? ranges : true;
  });
}
