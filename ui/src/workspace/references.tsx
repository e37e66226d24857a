// `#` references: typing # in the composer offers documents (this
// repository's first, then others) by title, through the quick switcher's
// search; a chosen one is a chip above the box and goes with the message as
// {kind: "document", channelId}. The server keeps each with the title it had
// and what the sender saw of its plan (docs/room-protocol.md, chat:send);
// Chat shows it under the document's current title, linking to it, and a
// document's header lists who refers to it.

import { useEffect, useState } from "preact/hooks";
import { api, pathOf, type Channel } from "../api";
import { onLinkClick } from "../router";
import { searchDocuments } from "../search";
import type { MessageReference } from "../protocol";
import "./references.css";

// maxReferences is the server's bound on one message's references.
export const maxReferences = 10;

// ChosenReference is a document picked for the message being written.
export interface ChosenReference {
  channelId: string;
  title: string;
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
  onRemove: (channelId: string) => void;
}) {
  if (!refs.length) return null;
  return (
    <div class="reference-chips" aria-label="Documents this message refers to">
      <span class="muted small">Refers to</span>
      {refs.map((r) => (
        <span class="reference-chip" key={r.channelId}>
          {r.title}
          <button
            type="button"
            class="link small"
            disabled={disabled}
            aria-label={`Do not refer to ${r.title}`}
            onClick={() => onRemove(r.channelId)}
          >
            ×
          </button>
        </span>
      ))}
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
// title, struck through.
export function MessageReferences({ refs }: { refs: MessageReference[] }) {
  const [now, setNow] = useState<Record<string, Channel | null>>({});
  useEffect(() => {
    let live = true;
    for (const r of refs) entryOf(r.channelId).then((c) => live && setNow((was) => ({ ...was, [r.channelId]: c })));
    return () => {
      live = false;
    };
  }, [refs]);
  return (
    <p class="message-references small">
      {refs.map((r) => {
        const c = now[r.channelId];
        if (!c)
          return (
            <span
              class={"reference-chip" + (c === null ? " gone" : "")}
              key={r.channelId}
              title={c === null ? "This document was deleted" : undefined}
            >
              #{r.label}
            </span>
          );
        return (
          <a
            class="reference-chip"
            key={r.channelId}
            href={pathOf(c.url)}
            onClick={onLinkClick}
            title={c.title !== r.label ? `Referred to as “${r.label}”` : undefined}
          >
            #{c.title}
          </a>
        );
      })}
    </p>
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
