// Full-text search (GET /api/search, docs/http-api.md): the documents whose
// title, description or plan text holds a query, each with the line that
// matched. The documents page and the quick switcher show it.

import { api, type Channel } from "./api";
import "./search.css";

export interface SearchMatch {
  field: "title" | "description" | "plan";
  line: number; // from 1, in that field
  text: string; // the line, cut to at most 200 characters around the match
}

export interface SearchResult {
  channel: Channel;
  repository: string; // owner/name
  match: SearchMatch;
}

export const maxSearchLimit = 50;

// searchDocuments asks the server; repository (owner/name) narrows it.
export async function searchDocuments(q: string, opts: { repository?: string; limit?: number } = {}) {
  const p = new URLSearchParams({ q: q.trim() });
  if (opts.repository) p.set("repository", opts.repository);
  if (opts.limit) p.set("limit", String(opts.limit));
  const answer = await api<{ results: SearchResult[] }>("GET", `/api/search?${p}`);
  return answer.results;
}

// Highlight shows text with the first occurrence of q (letter case aside)
// marked.
export function Highlight({ text, q }: { text: string; q: string }) {
  const needle = q.trim().toLowerCase();
  const at = needle ? text.toLowerCase().indexOf(needle) : -1;
  // toLowerCase may change a string's length; mark only when it did not.
  if (at < 0 || text.toLowerCase().length !== text.length) return <>{text}</>;
  return (
    <>
      {text.slice(0, at)}
      <mark>{text.slice(at, at + needle.length)}</mark>
      {text.slice(at + needle.length)}
    </>
  );
}

// MatchLine says where a document matched, under its title: nothing for a
// title (the title shows it), else the field, the line and its text.
export function MatchLine({ match, q }: { match: SearchMatch; q: string }) {
  if (match.field === "title") return null;
  const where = match.field === "plan" ? `Plan, line ${match.line}` : "Description";
  return (
    <p class="match-line">
      <span class="match-where">{where}:</span> <Highlight text={match.text} q={q} />
    </p>
  );
}
