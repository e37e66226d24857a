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
        <SignOutEverywhere />
      </div>
    </Shell>
  );
}

// SignOutEverywhere ends every browser's sign-in, this one's too: each
// needs a new link from `chopin open` to come back. A browser unused for 30
// days is signed out on its own.
function SignOutEverywhere() {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState("");
  async function signOut() {
    setError("");
    try {
      await api("POST", "/api/session/sign-out-everywhere");
      window.location.assign("/");
    } catch (err) {
      setError((err as Error).message);
    }
  }
  return (
    <section class="card" aria-label="Browsers">
      <h2>Browsers</h2>
      <p class="muted">
        A browser stays signed in until it goes 30 days without opening Chopin. Sign every browser out at once, this one
        included; run <code>chopin open</code> to sign in again.
      </p>
      <ErrorText error={error} />
      <div class="actions">
        {confirming ? (
          <>
            <button class="primary" type="button" onClick={signOut}>
              Yes, sign out every browser
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirming(true)}>
            Sign out everywhere
          </button>
        )}
      </div>
    </section>
  );
}
