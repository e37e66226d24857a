import { useEffect, useState } from "preact/hooks";
import { api, type Repository } from "../api";
import { navigate, onLinkClick } from "../router";
import { ErrorText, Shell } from "./shell";

const docsPath = (r: Repository) => `/documents/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repository)}`;

export function RepositoriesPage() {
  const [repos, setRepos] = useState<Repository[] | null>(null);
  const [name, setName] = useState("");
  const [path, setPath] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    document.title = "Repositories · Chopin";
    api<{ repositories: Repository[] }>("GET", "/api/repositories").then(
      (r) => setRepos(r.repositories),
      (e) => setError(e.message),
    );
  }, []);

  async function add(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const body: { name: string; path?: string } = { name: name.trim() };
      if (path.trim()) body.path = path.trim();
      const repo = await api<Repository>("POST", "/api/repositories", body);
      navigate(docsPath(repo));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Shell>
      <div class="page">
        <h1>Repositories</h1>
        <p class="lede">
          Every document belongs to a repository. Pick one, or add one by its <code>owner/name</code>.
        </p>
        {repos && repos.length > 0 && (
          <ul class="list" aria-label="Repositories">
            {repos.map((r) => (
              <li key={r.nodeId} class="list-row">
                <a href={docsPath(r)} onClick={onLinkClick} class="list-title">
                  {r.name}
                </a>
                {r.path && <span class="muted mono">{r.path}</span>}
              </li>
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
              Local checkout <em class="muted">(optional)</em>
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
