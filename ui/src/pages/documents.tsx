import { useEffect, useRef, useState } from "preact/hooks";
import { api, pathOf, type Channel } from "../api";
import { navigate, onLinkClick } from "../router";
import { ago, ErrorText, Shell } from "./shell";
import { showToast } from "../toast";
import { MatchLine, maxSearchLimit, searchDocuments, type SearchMatch } from "../search";

interface Page {
  channels: Channel[];
  nextCursor: string | null;
}

export function DocumentsPage({ owner, repository }: { owner: string; repository: string }) {
  const repo = `${owner}/${repository}`;
  const base = `/api/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(repository)}/channels`;
  const [query, setQuery] = useState(new URLSearchParams(location.search).get("query") ?? "");
  const [archived, setArchived] = useState(new URLSearchParams(location.search).get("includeArchived") === "true");
  const [list, setList] = useState<Channel[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  // While searching: where each document matched, and whether the answer
  // was cut at the search's limit.
  const [matches, setMatches] = useState<Record<string, SearchMatch>>({});
  const [capped, setCapped] = useState(false);
  const [error, setError] = useState("");
  const [title, setTitle] = useState("");
  const [createError, setCreateError] = useState("");
  const [importError, setImportError] = useState("");
  const gen = useRef(0);
  // Whether the repository has archived documents, asked only when none
  // is shown, so an empty list says where they are.
  const [hasArchived, setHasArchived] = useState(false);

  function params(c?: string | null) {
    const p = new URLSearchParams();
    if (query.trim()) p.set("query", query.trim());
    if (archived) p.set("includeArchived", "true");
    if (c) p.set("cursor", c);
    return p;
  }

  async function load(more = false) {
    const g = ++gen.current;
    try {
      if (query.trim() && !more) {
        // A search covers plan text too, through the full-text search.
        const results = await searchDocuments(query, { repository: repo, limit: maxSearchLimit });
        if (g !== gen.current) return;
        const shown = results.filter((r) => archived || !r.channel.archivedAt);
        setList(shown.map((r) => r.channel));
        setMatches(Object.fromEntries(shown.map((r) => [r.channel.id, r.match])));
        setCapped(results.length === maxSearchLimit);
        setCursor(null);
        setError("");
        return;
      }
      const page = await api<Page>("GET", `${base}?${params(more ? cursor : null)}`);
      if (g !== gen.current) return;
      setList((old) => (more && old ? [...old, ...page.channels] : page.channels));
      setMatches({});
      setCapped(false);
      setCursor(page.nextCursor);
      setError("");
    } catch (e) {
      if (g === gen.current) setError((e as Error).message);
    }
  }

  useEffect(() => {
    document.title = `${repo} · Chopin`;
    // The search lives in the address so it survives a reload.
    const p = params();
    history.replaceState(history.state, "", location.pathname + (p.size ? "?" + p : "") + location.hash);
    const t = setTimeout(() => load(), query ? 180 : 0);
    return () => clearTimeout(t);
  }, [query, archived]);

  const empty = list !== null && list.length === 0 && !query.trim() && !archived;
  useEffect(() => {
    if (!empty) return setHasArchived(false);
    let live = true;
    api<Page>("GET", `${base}?includeArchived=true&limit=1`).then(
      (p) => live && setHasArchived(p.channels.length > 0),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [empty]);

  async function create(e: Event) {
    e.preventDefault();
    setCreateError("");
    try {
      const ch = await api<Channel>("POST", base, title.trim() ? { title: title.trim() } : undefined);
      navigate(pathOf(ch.url));
    } catch (err) {
      setCreateError((err as Error).message);
    }
  }

  // A Markdown file becomes a new document, checked as any plan is; a
  // refusal lists each problem with its line. A title another document has
  // gets the next free one, and the answer's notice says so.
  async function importFile(input: HTMLInputElement) {
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    setImportError("");
    const q = new URLSearchParams({ fileName: file.name });
    try {
      const ch = await api<Channel & { notice?: string }>(
        "POST",
        `/api/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(repository)}/imports?${q}`,
        new Blob([file], { type: "text/markdown" }),
      );
      navigate(pathOf(ch.url));
      if (ch.notice) showToast({ text: ch.notice, ms: 15000 });
    } catch (err) {
      setImportError(`${file.name}: ${(err as Error).message}`);
    }
  }

  const replace = (ch: Channel) => setList((old) => old?.map((c) => (c.id === ch.id ? ch : c)) ?? null);
  const remove = (id: string) => setList((old) => old?.filter((c) => c.id !== id) ?? null);

  return (
    <Shell crumbs={[{ label: repo }]}>
      <div class="page">
        <h1>Documents</h1>
        <form class="create-row" onSubmit={create} aria-label="New document">
          <input
            name="title"
            placeholder="Title (optional)"
            value={title}
            onInput={(e) => setTitle(e.currentTarget.value)}
            autocomplete="off"
          />
          <button class="primary" type="submit">
            New document
          </button>
          <label class="button" title="Make a document of a Markdown file">
            Import .md…
            <input
              type="file"
              name="import"
              accept=".md,.markdown,.mdx,text/markdown"
              class="visually-hidden"
              onChange={(e) => importFile(e.currentTarget)}
            />
          </label>
        </form>
        <ErrorText error={createError} />
        <ErrorText error={importError} />
        <div class="search-row">
          <input
            type="search"
            name="query"
            placeholder="Search titles, descriptions and plans"
            aria-label="Search documents"
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
          />
          <label class="check">
            <input
              type="checkbox"
              name="includeArchived"
              checked={archived}
              onChange={(e) => setArchived(e.currentTarget.checked)}
            />
            Show archived
          </label>
        </div>
        <ErrorText error={error} />
        {list && list.length === 0 && (
          <p class="empty">
            {query ? (
              "No document matches this search."
            ) : archived ? (
              "No documents yet. Create the first one above."
            ) : hasArchived ? (
              <>
                Every document here is archived.{" "}
                <button class="link" onClick={() => setArchived(true)}>
                  Show archived
                </button>{" "}
                lists them, with Restore; or create a new one above.
              </>
            ) : (
              "No documents yet. Create the first one above."
            )}
          </p>
        )}
        {list && list.length > 0 && (
          <ul class="list" aria-label="Documents">
            {list.map((ch) => (
              <DocumentRow
                key={ch.id}
                ch={ch}
                onChange={replace}
                onDelete={remove}
                onRestored={() => load()}
                hideArchived={!archived}
                match={matches[ch.id]}
                query={query}
              />
            ))}
          </ul>
        )}
        {capped && (
          <p class="muted small">Showing the first {maxSearchLimit} matches. Type more words to narrow the search.</p>
        )}
        {cursor && (
          <button class="quiet" onClick={() => load(true)}>
            Load more
          </button>
        )}
      </div>
    </Shell>
  );
}

function DocumentRow({
  ch,
  onChange,
  onDelete,
  onRestored,
  hideArchived,
  match,
  query,
}: {
  ch: Channel;
  onChange: (c: Channel) => void;
  onDelete: (id: string) => void;
  onRestored: () => void;
  hideArchived: boolean;
  match?: SearchMatch;
  query: string;
}) {
  const [mode, setMode] = useState<"view" | "rename" | "delete">("view");
  const [title, setTitle] = useState(ch.title);
  const [error, setError] = useState("");
  const path = `/api/channels/${ch.id}`;

  async function run(f: () => Promise<void>) {
    setError("");
    try {
      await f();
    } catch (e) {
      setError((e as Error).message);
    }
  }
  const rename = (e: Event) => {
    e.preventDefault();
    run(async () => {
      onChange(await api<Channel>("PATCH", path, { title }));
      setMode("view");
    });
  };
  const archive = () =>
    run(async () => {
      const c = await api<Channel>("POST", path + "/archive");
      if (hideArchived) onDelete(c.id);
      else onChange(c);
      showToast({
        text: `Archived “${c.title}”.`,
        action: {
          label: "Undo",
          run: async () => {
            await api<Channel>("POST", path + "/restore");
            onRestored();
          },
        },
      });
    });
  const restore = () => run(async () => onChange(await api<Channel>("POST", path + "/restore")));
  const del = () =>
    run(async () => {
      await api("DELETE", path);
      onDelete(ch.id);
    });

  return (
    <li class={"list-row doc-row" + (ch.archivedAt ? " archived" : "")} data-slug={ch.slug}>
      {mode === "rename" ? (
        <form class="rename" onSubmit={rename}>
          <input aria-label="New title" value={title} onInput={(e) => setTitle(e.currentTarget.value)} autoFocus />
          <button class="primary" type="submit">
            Save
          </button>
          <button type="button" class="quiet" onClick={() => (setMode("view"), setTitle(ch.title))}>
            Cancel
          </button>
        </form>
      ) : (
        <div class="doc-main">
          <a href={pathOf(ch.url)} onClick={onLinkClick} class="list-title">
            {ch.title}
          </a>
          {ch.archivedAt && <span class="badge">Archived</span>}
          {ch.description && <p class="muted description">{ch.description}</p>}
          {match && <MatchLine match={match} q={query} />}
          <span class="muted small">Updated {ago(ch.updatedAt)}</span>
        </div>
      )}
      {mode === "delete" ? (
        <div class="confirm" role="group" aria-label="Confirm delete">
          <span>Delete “{ch.title}” and its Chat and Decisions for good?</span>
          <button class="danger" onClick={del}>
            Delete permanently
          </button>
          <button class="quiet" onClick={() => setMode("view")}>
            Keep it
          </button>
        </div>
      ) : (
        mode === "view" && (
          <div class="row-actions">
            {!ch.archivedAt && (
              <button class="quiet" onClick={() => setMode("rename")}>
                Rename
              </button>
            )}
            {!ch.archivedAt && (
              <button class="quiet" onClick={archive}>
                Archive
              </button>
            )}
            {ch.archivedAt && (
              <button class="quiet" onClick={restore}>
                Restore
              </button>
            )}
            {ch.archivedAt && (
              <button class="quiet danger-text" onClick={() => setMode("delete")}>
                Delete…
              </button>
            )}
          </div>
        )
      )}
      <ErrorText error={error} />
    </li>
  );
}
