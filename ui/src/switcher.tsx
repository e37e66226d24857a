// The quick switcher: Ctrl-K (Cmd-K on a Mac) anywhere in the app opens a
// dialog that finds documents (titles, descriptions and plan text, through
// GET /api/search) and repositories (by name). Arrow keys choose, Enter
// opens, Escape closes and gives focus back to where it was. It is a
// combobox over a listbox, labelled for assistive technology.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, pathOf, type Repository } from "./api";
import { navigate } from "./router";
import { Highlight, MatchLine, searchDocuments, type SearchResult } from "./search";

type Item =
  { kind: "document"; key: string; result: SearchResult } | { kind: "repository"; key: string; repository: Repository };

const documentLimit = 20;
const repositoryLimit = 8;

// isSwitcherKey is Ctrl-K, or Cmd-K on a Mac.
function isSwitcherKey(e: KeyboardEvent): boolean {
  return (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "k";
}

// QuickSwitcher is mounted once, in the app shell; it renders nothing
// until opened.
export function QuickSwitcher() {
  const [open, setOpen] = useState(false);
  const returnFocus = useRef<HTMLElement | null>(null);
  useEffect(() => {
    // The capture phase, so that the editor or a text box does not take it first.
    const onKey = (e: KeyboardEvent) => {
      if (!isSwitcherKey(e)) return;
      e.preventDefault();
      e.stopPropagation();
      setOpen((was) => {
        if (!was) returnFocus.current = document.activeElement as HTMLElement | null;
        return true;
      });
    };
    addEventListener("keydown", onKey, true);
    return () => removeEventListener("keydown", onKey, true);
  }, []);
  if (!open) return null;
  const close = (restore: boolean) => {
    setOpen(false);
    if (restore) returnFocus.current?.focus?.();
  };
  return <SwitcherDialog onClose={close} />;
}

function SwitcherDialog({ onClose }: { onClose: (restoreFocus: boolean) => void }) {
  const [q, setQ] = useState("");
  const [repositories, setRepositories] = useState<Repository[]>([]);
  const [documents, setDocuments] = useState<SearchResult[]>([]);
  const [searching, setSearching] = useState(false);
  const [error, setError] = useState("");
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const gen = useRef(0);

  useEffect(() => {
    input.current?.focus();
    api<{ repositories: Repository[] }>("GET", "/api/repositories").then(
      (r) => setRepositories(r.repositories),
      (e) => setError((e as Error).message),
    );
  }, []);

  useEffect(() => {
    const g = ++gen.current;
    setActive(0);
    if (!q.trim()) {
      setDocuments([]);
      setSearching(false);
      return;
    }
    setSearching(true);
    const t = setTimeout(() => {
      searchDocuments(q, { limit: documentLimit }).then(
        (results) => {
          if (g !== gen.current) return;
          setDocuments(results);
          setSearching(false);
          setError("");
        },
        (e) => {
          if (g !== gen.current) return;
          setDocuments([]);
          setSearching(false);
          setError((e as Error).message);
        },
      );
    }, 120);
    return () => clearTimeout(t);
  }, [q]);

  const needle = q.trim().toLowerCase();
  const repoMatches = repositories
    .filter((r) => !needle || r.name.toLowerCase().includes(needle))
    .slice(0, repositoryLimit);
  const items: Item[] = [
    ...documents.map((result): Item => ({ kind: "document", key: "d:" + result.channel.id, result })),
    ...repoMatches.map((repository): Item => ({ kind: "repository", key: "r:" + repository.nodeId, repository })),
  ];
  const current = Math.min(active, Math.max(items.length - 1, 0));

  function openItem(item: Item | undefined) {
    if (!item) return;
    onClose(false);
    if (item.kind === "document") navigate(pathOf(item.result.channel.url));
    else
      navigate(
        `/documents/${encodeURIComponent(item.repository.owner)}/${encodeURIComponent(item.repository.repository)}`,
      );
  }

  function onKeyDown(e: KeyboardEvent) {
    switch (e.key) {
      case "ArrowDown":
        e.preventDefault();
        if (items.length) setActive((current + 1) % items.length);
        break;
      case "ArrowUp":
        e.preventDefault();
        if (items.length) setActive((current - 1 + items.length) % items.length);
        break;
      case "Home":
        if (items.length) (e.preventDefault(), setActive(0));
        break;
      case "End":
        if (items.length) (e.preventDefault(), setActive(items.length - 1));
        break;
      case "Enter":
        e.preventDefault();
        openItem(items[current]);
        break;
      case "Escape":
        e.preventDefault();
        e.stopPropagation();
        onClose(true);
        break;
      case "Tab":
        // The dialog is modal and the box its one control: focus stays.
        e.preventDefault();
        break;
    }
  }

  useEffect(() => {
    document.getElementById(`switcher-option-${current}`)?.scrollIntoView({ block: "nearest" });
  }, [current, items.length]);

  let status = "";
  if (error) status = error;
  else if (searching && items.length === 0) status = "Searching…";
  else if (needle && items.length === 0) status = "No document or repository matches.";
  else if (!needle && items.length === 0) status = "Type to find a document or a repository.";

  return (
    <div class="switcher-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose(true)}>
      <div class="switcher" role="dialog" aria-modal="true" aria-labelledby="switcher-title">
        <h2 id="switcher-title" class="visually-hidden">
          Go to a document or a repository
        </h2>
        <input
          ref={input}
          type="text"
          role="combobox"
          aria-label="Find a document or a repository"
          aria-expanded={items.length > 0}
          aria-controls="switcher-list"
          aria-autocomplete="list"
          aria-activedescendant={items.length ? `switcher-option-${current}` : undefined}
          placeholder="Find a document or a repository…"
          autocomplete="off"
          spellcheck={false}
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
          onKeyDown={onKeyDown}
        />
        <ul id="switcher-list" role="listbox" aria-label="Documents and repositories">
          {items.map((item, i) => (
            <li
              key={item.key}
              id={`switcher-option-${i}`}
              role="option"
              aria-selected={i === current}
              onMouseMove={() => i !== current && setActive(i)}
              onClick={() => openItem(item)}
            >
              {item.kind === "document" ? (
                <>
                  <span class="switcher-title">
                    <Highlight text={item.result.channel.title} q={q} />
                  </span>
                  <span class="switcher-kind">
                    {item.result.repository}
                    {item.result.channel.archivedAt ? " · archived" : ""}
                  </span>
                  <MatchLine match={item.result.match} q={q} />
                </>
              ) : (
                <>
                  <span class="switcher-title">
                    <Highlight text={item.repository.name} q={q} />
                  </span>
                  <span class="switcher-kind">Repository</span>
                </>
              )}
            </li>
          ))}
        </ul>
        <p class="switcher-status" role="status">
          {status}
        </p>
        <p class="switcher-hint" aria-hidden="true">
          ↑ ↓ to choose · Enter to open · Esc to close
        </p>
      </div>
    </div>
  );
}
