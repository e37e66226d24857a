// `#` references: typing # in the composer offers documents (this
// repository's first, then others) by title, through the quick switcher's
// search; a chosen one is a chip above the box and goes with the message as
// {kind: "document", channelId}. The server keeps each with the title it had
// and what the sender saw of its plan (docs/room-protocol.md, chat:send);
// Chat shows it under the document's current title, linking to it, and a
// document's header lists who refers to it.
//
// After a document is chosen, a second list offers its blocks: "Whole
// document" first (the default, keeping the document reference), then each
// block by its heading and first words, searchable. A chosen block goes as
// {kind: "passage", channelId, from, to, revision}; Chat shows the passage
// as it reads now, with a link that opens the document and marks it, or
// says it was deleted.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, pathOf, type Channel } from "../api";
import { onLinkClick } from "../router";
import { searchDocuments } from "../search";
import type { MessageReference, PassageNow, ReferenceRequest } from "../protocol";
import "./references.css";

// maxReferences is the server's bound on one message's references.
export const maxReferences = 10;

// ChosenReference is a document, or a passage of one, picked for the
// message being written.
export interface ChosenReference {
  channelId: string;
  title: string;
  passage?: ChosenPassage;
}

// ChosenPassage is a block picked in the passage list, with the revision
// its offsets were read at.
export interface ChosenPassage {
  from: number;
  to: number;
  revision: number;
  heading?: string;
  words: string;
}

// PassageChoice is a block as GET .../passages lists it.
export interface PassageChoice {
  index: number;
  type: string;
  from: number;
  to: number;
  startLine: number;
  endLine: number;
  heading?: string;
  words: string;
}

// referenceKey names a chosen reference among the others.
export const referenceKey = (r: { channelId: string; passage?: { from: number; to: number } }) =>
  r.passage ? `${r.channelId}:${r.passage.from}:${r.passage.to}` : r.channelId;

// referenceRequests are the chosen references as chat:send carries them.
export function referenceRequests(refs: ChosenReference[]): ReferenceRequest[] {
  return refs.map((r) =>
    r.passage
      ? {
          kind: "passage",
          channelId: r.channelId,
          from: r.passage.from,
          to: r.passage.to,
          revision: r.passage.revision,
        }
      : { kind: "document", channelId: r.channelId },
  );
}

// firstWords is text cut to about n characters at a word, an ellipsis
// ending a cut one.
export function firstWords(text: string, n = 40): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= n) return t;
  const cut = t.slice(0, n);
  const at = cut.lastIndexOf(" ");
  return (at > n / 2 ? cut.slice(0, at) : cut).replace(/[\s,.;:]+$/, "") + "…";
}

// passageLabel is how a passage reads on a chip: "Launch plan › Goals:
// “Ship the beta…”", without the heading when it has none.
export function passageLabel(title: string, heading: string | undefined, words: string): string {
  return `${title} › ${heading ? heading + ": " : ""}“${firstWords(words)}”`;
}

// passageMatches are the blocks a search in the passage list finds: every
// word of the query in the block's heading or first words, any case.
export function passageMatches(blocks: PassageChoice[], query: string): PassageChoice[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return blocks;
  return blocks.filter((b) => {
    const hay = ((b.heading ?? "") + " " + b.words).toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

// choosePassage is the references once a block of the document chosen
// last is picked: the passage in place of that document's whole reference
// when choosing it added that, else after the others; once each.
export function choosePassage(
  refs: ChosenReference[],
  doc: { channelId: string; title: string; addedWhole: boolean },
  passage: ChosenPassage,
): ChosenReference[] {
  const chosen: ChosenReference = { channelId: doc.channelId, title: doc.title, passage };
  if (refs.some((r) => referenceKey(r) === referenceKey(chosen))) return refs;
  const rest = doc.addedWhole ? refs.filter((r) => r.passage || r.channelId !== doc.channelId) : refs;
  return [...rest, chosen];
}

// referenceQuery is the # being typed at the caret: where it starts and
// the words after it, or null. A # counts at the start of the text or after
// a space or an opening bracket, and the words run to the caret on one
// line, at most 60 characters.
export function referenceQuery(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const at = before.lastIndexOf("#");
  if (at < 0) return null;
  if (at > 0 && !/[\s([{]/.test(before[at - 1])) return null;
  const query = before.slice(at + 1);
  if (query.length > 60 || /[\n#]/.test(query) || /^\s/.test(query)) return null;
  return { start: at, query };
}

// activeReference is the # being typed at the caret that still asks for a
// document: not one whose words are a document already chosen and the text
// after it ("#Launch plan and then…").
export function activeReference(
  text: string,
  caret: number,
  chosen: string[],
): { start: number; query: string } | null {
  const q = referenceQuery(text, caret);
  if (!q || chosen.some((title) => q.query.startsWith(title + " "))) return null;
  return q;
}

// chooseReference puts "#<title> " in place of the # being typed and
// returns the new text and where the caret goes.
export function chooseReference(
  text: string,
  q: { start: number; query: string },
  title: string,
): { text: string; caret: number } {
  const end = q.start + 1 + q.query.length;
  const inserted = "#" + title + " ";
  return {
    text: text.slice(0, q.start) + inserted + text.slice(end).replace(/^ /, ""),
    caret: q.start + inserted.length,
  };
}

// ownFirst orders documents of repository before the others, keeping each
// group's order.
export function ownFirst<T extends { repository: string }>(items: T[], repository: string): T[] {
  return [...items.filter((i) => i.repository === repository), ...items.filter((i) => i.repository !== repository)];
}

// useReferenceMatches finds the documents a # query names: this
// repository's newest when nothing is typed after the #, else a search
// across every repository, this one's first. null while it looks.
export function useReferenceMatches(query: string | null, repository: string): Channel[] | null {
  const [found, setFound] = useState<Channel[] | null>(null);
  useEffect(() => {
    if (query === null) return;
    let live = true;
    setFound(null);
    const t = setTimeout(
      async () => {
        try {
          let docs: Channel[];
          if (!query.trim()) {
            const [owner, name] = repository.split("/");
            const r = await api<{ channels: Channel[] }>(
              "GET",
              `/api/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/channels?limit=8`,
            );
            docs = r.channels;
          } else {
            docs = (await searchDocuments(query, { limit: 20 })).map((r) => r.channel);
          }
          if (live) setFound(ownFirst(docs, repository).slice(0, 8));
        } catch {
          if (live) setFound([]);
        }
      },
      query.trim() ? 120 : 0,
    );
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [query, repository]);
  return query === null ? null : found;
}

// referenceOptionID is the id of the list's i-th option, for
// aria-activedescendant.
export const referenceOptionID = (i: number) => "reference-option-" + i;

// ReferenceList is the list of documents a # offers.
export function ReferenceList({
  items,
  active,
  repository,
  onChoose,
}: {
  items: Channel[] | null;
  active: number;
  repository: string;
  onChoose: (c: Channel) => void;
}) {
  return (
    <div class="reference-list" id="reference-options" role="listbox" aria-label="Documents to refer to">
      {items === null && <p class="muted small reference-empty">Looking for documents…</p>}
      {items?.length === 0 && (
        <p class="muted small reference-empty">No document has that title. Keep typing, or press Escape.</p>
      )}
      {items?.map((c, i) => (
        <div
          key={c.id}
          id={referenceOptionID(i)}
          role="option"
          aria-selected={i === active}
          class={"reference-option" + (i === active ? " active" : "")}
          onMouseDown={(e) => (e.preventDefault(), onChoose(c))}
        >
          <span class="reference-title">{c.title}</span>
          {c.repository !== repository && <span class="muted small"> {c.repository}</span>}
          {c.archivedAt && <span class="badge">archived</span>}
        </div>
      ))}
    </div>
  );
}

// ChosenReferences are the chips of the documents the message refers to,
// each removable.
export function ChosenReferences({
  refs,
  disabled,
  onRemove,
}: {
  refs: ChosenReference[];
  disabled: boolean;
  onRemove: (key: string) => void;
}) {
  if (!refs.length) return null;
  return (
    <div class="reference-chips" aria-label="Documents this message refers to">
      <span class="muted small">Refers to</span>
      {refs.map((r) => {
        const label = r.passage ? passageLabel(r.title, r.passage.heading, r.passage.words) : r.title;
        return (
          <span class={"reference-chip" + (r.passage ? " passage" : "")} key={referenceKey(r)}>
            {label}
            <button
              type="button"
              class="link small"
              disabled={disabled}
              aria-label={`Do not refer to ${label}`}
              onClick={() => onRemove(referenceKey(r))}
            >
              ×
            </button>
          </span>
        );
      })}
    </div>
  );
}

// The documents' catalog entries as Chat shows references: each read once
// per page load, by ID, so a rename shows.
const entries = new Map<string, Promise<Channel | null>>();
function entryOf(id: string): Promise<Channel | null> {
  let p = entries.get(id);
  if (!p) {
    p = api<Channel>("GET", `/api/channels/${encodeURIComponent(id)}`).catch(() => null);
    entries.set(id, p);
  }
  return p;
}

// MessageReferences shows the documents a message refers to, each under its
// current title and linking to it; a document since deleted shows its old
// title, struck through. A passage shows as it reads now (read once per
// page load), with a link that opens its document and marks it, or says
// it was deleted.
export function MessageReferences({
  refs,
  channel,
  message,
}: {
  refs: MessageReference[];
  channel: string;
  message: string;
}) {
  const [now, setNow] = useState<Record<string, Channel | null>>({});
  const [passages, setPassages] = useState<(PassageNow | undefined)[] | null>(null);
  useEffect(() => {
    let live = true;
    for (const r of refs) entryOf(r.channelId).then((c) => live && setNow((was) => ({ ...was, [r.channelId]: c })));
    if (refs.some((r) => r.passage)) passagesOf(channel, message).then((p) => live && setPassages(p));
    return () => {
      live = false;
    };
  }, [refs, channel, message]);
  return (
    <div class="message-references small">
      {refs.map((r, i) => {
        const c = now[r.channelId];
        const title = c ? c.title : r.label;
        const label = r.passage ? `#${title} › ${r.passage.heading || "passage"}` : "#" + title;
        const chip = !c ? (
          <span
            class={"reference-chip" + (c === null ? " gone" : "")}
            key={i}
            title={c === null ? "This document was deleted" : undefined}
          >
            {r.passage ? `#${r.label} › ${r.passage.heading || "passage"}` : "#" + r.label}
          </span>
        ) : (
          <a
            class="reference-chip"
            key={i}
            href={pathOf(c.url)}
            onClick={onLinkClick}
            title={c.title !== r.label ? `Referred to as “${r.label}”` : undefined}
          >
            {label}
          </a>
        );
        if (!r.passage) return chip;
        return (
          <div class="reference-passage" key={i}>
            {chip}
            <PassageNowLine c={c} now={passages ? (passages[i] ?? null) : undefined} quote={r.passage.quote} />
          </div>
        );
      })}
    </div>
  );
}

// PassageNowLine is a referenced passage as it reads now: its quote and a
// link that shows it in its document, or that it was deleted.
function PassageNowLine({
  c,
  now,
  quote,
}: {
  c: Channel | null | undefined;
  now: PassageNow | null | undefined;
  quote: string;
}) {
  if (now === undefined) return <q class="reference-quote muted">{quote}</q>;
  if (!now || now.state === "orphaned" || !c)
    return (
      <span class="reference-quote gone">
        <q>{quote}</q> The passage was deleted or rewritten since; it is not in the document now.
      </span>
    );
  const lines = now.startLine === now.endLine ? `line ${now.startLine}` : `lines ${now.startLine}–${now.endLine}`;
  return (
    <span class="reference-quote">
      <q>{now.quote}</q>
      {now.state === "changed" && <span class="muted"> (changed since)</span>}{" "}
      <a
        href={pathOf(c.url)}
        class="reference-show"
        onClick={(e) => {
          showPassageLater({ channelId: c.id, startLine: now.startLine!, endLine: now.endLine! });
          onLinkClick(e);
        }}
      >
        Show passage ({lines})
      </a>
    </span>
  );
}

// passagesOf reads where a message's passages are now, by the reference's
// place in the message; undefined for a whole document's.
async function passagesOf(channel: string, message: string): Promise<(PassageNow | undefined)[]> {
  try {
    const r = await api<{ references: { now?: PassageNow }[] }>(
      "GET",
      `/api/channels/${encodeURIComponent(channel)}/messages/${encodeURIComponent(message)}/references`,
    );
    return r.references.map((x) => x.now);
  } catch {
    return [];
  }
}

// A passage to mark once its document's plan shows (Show passage): the
// plan pane takes it when it is ready, or at once when it already is.
export const passageEvent = "chopin:show-passage";
let pendingPassage: { channelId: string; startLine: number; endLine: number } | null = null;

export function showPassageLater(p: { channelId: string; startLine: number; endLine: number }) {
  pendingPassage = p;
  queueMicrotask(() => window.dispatchEvent(new Event(passageEvent)));
}

// takePassage is the passage waiting to be marked in document channelId.
export function takePassage(channelId: string): { startLine: number; endLine: number } | null {
  if (pendingPassage?.channelId !== channelId) return null;
  const p = pendingPassage;
  pendingPassage = null;
  return p;
}

// passageOptionID is the id of the passage list's i-th option.
export const passageOptionID = (i: number) => "passage-option-" + i;

// PassagePicker is the second step after choosing a document with #: its
// blocks, "Whole document" first, searchable with the box above them.
// Enter picks, Escape or leaving keeps the whole document.
export function PassagePicker({
  channelId,
  title,
  onChoose,
  onClose,
}: {
  channelId: string;
  title: string;
  onChoose: (p: ChosenPassage) => void;
  onClose: () => void;
}) {
  const [list, setList] = useState<{ revision: number; blocks: PassageChoice[] } | null | "failed">(null);
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    let live = true;
    api<{ revision: number; blocks: PassageChoice[] }>(
      "GET",
      `/api/channels/${encodeURIComponent(channelId)}/passages`,
    ).then(
      (r) => live && setList(r),
      () => live && setList("failed"),
    );
    input.current?.focus();
    return () => {
      live = false;
    };
  }, [channelId]);
  const items = list && list !== "failed" ? passageMatches(list.blocks, query).slice(0, 100) : [];
  const n = items.length + 1;
  const at = Math.min(active, n - 1);
  const pick = (i: number) => {
    if (i === 0 || !list || list === "failed") return onClose();
    const b = items[i - 1];
    onChoose({ from: b.from, to: b.to, revision: list.revision, heading: b.heading, words: b.words });
  };
  return (
    <div class="passage-list">
      <input
        ref={input}
        class="passage-search"
        type="text"
        aria-autocomplete="list"
        aria-label={`Search the passages of ${title}`}
        aria-controls="passage-options"
        aria-activedescendant={passageOptionID(at)}
        placeholder={`A passage of ${title}, or the whole document`}
        value={query}
        onInput={(e) => {
          const q = e.currentTarget.value;
          setQuery(q);
          setActive(q.trim() && list && list !== "failed" && passageMatches(list.blocks, q).length ? 1 : 0);
        }}
        onBlur={onClose}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            setActive((at + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
          } else if (e.key === "Enter" || (e.key === "Tab" && !e.shiftKey)) {
            e.preventDefault();
            pick(at);
          } else if (e.key === "Escape") {
            e.preventDefault();
            onClose();
          }
        }}
      />
      <div role="listbox" id="passage-options" aria-label={`Passages of ${title}`}>
        <div
          id={passageOptionID(0)}
          role="option"
          aria-selected={at === 0}
          class={"reference-option" + (at === 0 ? " active" : "")}
          onMouseDown={(e) => (e.preventDefault(), pick(0))}
        >
          <span class="reference-title">Whole document</span>
          <span class="muted small">{title}</span>
        </div>
        {list === null && <p class="muted small reference-empty">Reading its blocks…</p>}
        {list === "failed" && (
          <p class="muted small reference-empty">
            Its blocks could not be read. Press Enter to refer to the whole document.
          </p>
        )}
        {list && list !== "failed" && items.length === 0 && (
          <p class="muted small reference-empty">
            {query.trim() ? "No block has those words." : "This document has no text yet."}
          </p>
        )}
        {items.map((b, i) => (
          <div
            key={b.index}
            id={passageOptionID(i + 1)}
            role="option"
            aria-selected={at === i + 1}
            class={"reference-option passage-option" + (at === i + 1 ? " active" : "")}
            onMouseDown={(e) => (e.preventDefault(), pick(i + 1))}
          >
            {b.heading && b.type !== "heading" && <span class="muted small">{b.heading} ›</span>}
            <span class={"reference-title" + (b.type === "heading" ? " passage-heading" : "")}>{b.words}</span>
            <span class="muted small passage-line">line {b.startLine}</span>
          </div>
        ))}
      </div>
    </div>
  );
}

// ReferencedBy lists, in the header, the documents whose Chat refers to
// this one; nothing when none does.
export function ReferencedBy({ channelId, refresh }: { channelId: string; refresh: unknown }) {
  const [by, setBy] = useState<Channel[]>([]);
  useEffect(() => {
    let live = true;
    api<{ referencedBy: Channel[] }>("GET", `/api/channels/${encodeURIComponent(channelId)}/referenced-by`).then(
      (r) => live && setBy(r.referencedBy),
      () => live && setBy([]),
    );
    return () => {
      live = false;
    };
  }, [channelId, refresh]);
  if (!by.length) return null;
  return (
    <details class="referenced-by">
      <summary class="small" title="Documents whose Chat refers to this one">
        Referenced by {by.length}
      </summary>
      <ul class="referenced-by-list">
        {by.map((c) => (
          <li key={c.id}>
            <a href={pathOf(c.url)} onClick={onLinkClick}>
              {c.title}
            </a>
            <span class="muted small"> {c.repository}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
