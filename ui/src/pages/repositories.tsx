// The repositories page: every registered repository with its local
// checkout (folder, branch, commit, a warning when its origin names another
// repository), setting or changing a checkout, and adding a repository.

import { useEffect, useState } from "preact/hooks";
import { api, type Repository } from "../api";
import { navigate, onLinkClick } from "../router";
import { ErrorText, Shell } from "./shell";

const docsPath = (r: Repository) => `/documents/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repository)}`;
const repoPath = (r: Repository) =>
  `/api/repositories/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repository)}`;

export function RepositoriesPage() {
  const [repos, setRepos] = useState<Repository[] | null>(null);
  const [name, setName] = useState("");
  const [path, setPath] = useState("");
  const [error, setError] = useState("");
  const [added, setAdded] = useState<Repository | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () =>
    api<{ repositories: Repository[] }>("GET", "/api/repositories").then(
      (r) => setRepos(r.repositories),
      (e) => setError(e.message),
    );
  useEffect(() => {
    document.title = "Repositories · Chopin";
    load();
  }, []);

  async function add(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError("");
    setAdded(null);
    try {
      const body: { name: string; path?: string } = { name: name.trim() };
      if (path.trim()) body.path = path.trim();
      const repo = await api<Repository>("POST", "/api/repositories", body);
      if (repo.checkout?.warning) {
        // Stay, so the warning is read before anything else.
        setAdded(repo);
        setName("");
        setPath("");
        await load();
        return;
      }
      navigate(docsPath(repo));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  const replace = (r: Repository) => setRepos((list) => (list ?? []).map((x) => (x.nodeId === r.nodeId ? r : x)));

  return (
    <Shell>
      <div class="page">
        <h1>Repositories</h1>
        <p class="lede">
          Every document belongs to a repository. Pick one, or add one by its <code>owner/name</code>. Give a repository
          its local checkout and its documents' Planner can read the code.
        </p>
        {repos && repos.length > 0 && (
          <ul class="list" aria-label="Repositories">
            {repos.map((r) => (
              <RepositoryRow key={r.nodeId} repo={r} onChange={replace} />
            ))}
          </ul>
        )}
        {repos && repos.length === 0 && <p class="empty">No repositories yet.</p>}
        <form class="form card" onSubmit={add} aria-label="Add a repository">
          <h2>Add a repository</h2>
          <label>
            <span>Name</span>
            <input
              name="name"
              required
              placeholder="owner/name"
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              autocomplete="off"
              spellcheck={false}
            />
          </label>
          <label>
            <span>
              Local checkout <em class="muted">(optional: the top folder of a Git work tree)</em>
            </span>
            <input
              name="path"
              placeholder="/home/you/src/project"
              value={path}
              onInput={(e) => setPath(e.currentTarget.value)}
              autocomplete="off"
              spellcheck={false}
            />
          </label>
          <ErrorText error={error} />
          {added && (
            <p class="warning-text" role="status">
              Added {added.name}. {added.checkout?.warning}
            </p>
          )}
          <div class="actions">
            <button class="primary" type="submit" disabled={busy || !name.trim()}>
              Add repository
            </button>
          </div>
        </form>
        <section class="card backup" aria-label="Back up">
          <h2>Back up</h2>
          <p class="muted">
            A copy of every document, Chat and Decision, consistent even while people edit. To restore it, quit Chopin
            and put it in place of <code>chopin.db</code> in the data directory.
          </p>
          <a class="button" href="/api/backup" download>
            Download a backup
          </a>
        </section>
      </div>
    </Shell>
  );
}

// RepositoryRow is one repository: its name, its checkout and what the
// checkout holds, and a form to set, change or clear it.
function RepositoryRow({ repo: r, onChange }: { repo: Repository; onChange: (r: Repository) => void }) {
  const [editing, setEditing] = useState(false);
  const [path, setPath] = useState(r.path ?? "");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const c = r.checkout;

  async function save(e: Event, value: string) {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const updated = await api<Repository>("PATCH", repoPath(r), { path: value.trim() });
      onChange(updated);
      setPath(updated.path ?? "");
      setEditing(false);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <li class="list-row" aria-label={r.name}>
      <a href={docsPath(r)} onClick={onLinkClick} class="list-title">
        {r.name}
      </a>
      {r.path && <span class="muted mono">{r.path}</span>}
      {c && !c.problem && (
        <span class="muted checkout-line" aria-label="Checkout state">
          {c.branch ? `on ${c.branch}` : "detached HEAD"}
          {c.head ? ` at ${c.head.slice(0, 7)}` : ", no commits yet"}
          {c.git ? "" : " · Git was not found on this computer"}
        </span>
      )}
      {c?.problem && (
        <p class="warning-text checkout-line" role="status">
          {c.problem}
        </p>
      )}
      {c?.warning && (
        <p class="warning-text checkout-line" role="status">
          {c.warning}
        </p>
      )}
      {!editing && (
        <button class="quiet small" type="button" onClick={() => setEditing(true)}>
          {r.path ? "Change checkout" : "Set checkout"}
        </button>
      )}
      {editing && (
        <form class="checkout-form" onSubmit={(e) => save(e, path)} aria-label={`Local checkout of ${r.name}`}>
          <input
            name="checkout"
            aria-label="Local checkout"
            placeholder="/home/you/src/project"
            value={path}
            onInput={(e) => setPath(e.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
          />
          <button class="primary small" type="submit" disabled={busy}>
            Save
          </button>
          {r.path && (
            <button class="quiet small" type="button" disabled={busy} onClick={(e) => save(e, "")}>
              Clear
            </button>
          )}
          <button
            class="quiet small"
            type="button"
            onClick={() => {
              setEditing(false);
              setError("");
              setPath(r.path ?? "");
            }}
          >
            Cancel
          </button>
          <ErrorText error={error} />
        </form>
      )}
    </li>
  );
}
