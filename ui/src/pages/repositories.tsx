// The repositories page: every registered repository with its local
// checkout (folder, branch, commit, a warning when its origin names another
// repository), setting or changing a checkout, renaming and removing a
// repository, and adding one; with none yet, a one-click personal
// repository for plans not tied to code.

import { useEffect, useState } from "preact/hooks";
import { api, ApiError, type Repository } from "../api";
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
  const [personal, setPersonal] = useState("");

  const load = () =>
    api<{ repositories: Repository[]; personal: string }>("GET", "/api/repositories").then(
      (r) => {
        setRepos(r.repositories);
        setPersonal(r.personal);
      },
      (e) => setError(e.message),
    );
  useEffect(() => {
    document.title = "Repositories · Chopin";
    load();
  }, []);

  async function startPersonal() {
    setBusy(true);
    setError("");
    try {
      navigate(docsPath(await api<Repository>("POST", "/api/repositories", { name: personal })));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

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
          Every document belongs to a repository. Pick one, or add one by its <code>owner/name</code>, as on GitHub.
          Give a repository its local checkout and its documents' Planner can read the code.
        </p>
        {repos && repos.length > 0 && (
          <ul class="list" aria-label="Repositories">
            {repos.map((r) => (
              <RepositoryRow
                key={r.nodeId}
                repo={r}
                onChange={replace}
                onRemoved={() => setRepos((list) => (list ?? []).filter((x) => x.nodeId !== r.nodeId))}
              />
            ))}
          </ul>
        )}
        {repos && repos.length === 0 && personal && (
          <section class="card first-run" aria-label="Start">
            <h2>Start here</h2>
            <p>
              Plans that are not about a codebase (a trip, a course, a book) need a repository too. Start with a
              personal one, <code>{personal}</code>; rename it whenever you like.
            </p>
            <div class="actions">
              <button class="primary" type="button" disabled={busy} onClick={startPersonal}>
                Start with a personal repository
              </button>
            </div>
            <p class="muted small">Or add the repository of a codebase below.</p>
          </section>
        )}
        <form class="form card" onSubmit={add} aria-label="Add a repository">
          <h2>Add a repository</h2>
          <label>
            <span>Name</span>
            <input
              name="name"
              required
              placeholder="acme/website"
              aria-describedby="repo-name-hint"
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              autocomplete="off"
              spellcheck={false}
            />
            <small id="repo-name-hint" class="muted">
              Owner and name, as in a GitHub address: <code>acme/website</code>. Plans not tied to code can use your
              own, such as <code>{personal || "me/plans"}</code>.
            </small>
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
        <SignOutEverywhere />
      </div>
    </Shell>
  );
}

// RepositoryRow is one repository: its name, its checkout and what the
// checkout holds, and a form to set, change or clear it.
function RepositoryRow({
  repo: r,
  onChange,
  onRemoved,
}: {
  repo: Repository;
  onChange: (r: Repository) => void;
  onRemoved: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [removing, setRemoving] = useState(false);
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
      {!editing && !renaming && !removing && (
        <div class="row-actions">
          <button class="quiet small" type="button" onClick={() => setEditing(true)}>
            {r.path ? "Change checkout" : "Set checkout"}
          </button>
          <button class="quiet small" type="button" onClick={() => setRenaming(true)}>
            Rename
          </button>
          <button class="quiet small" type="button" onClick={() => setRemoving(true)}>
            Remove
          </button>
        </div>
      )}
      {renaming && (
        <RenameForm
          repo={r}
          onDone={(updated) => {
            setRenaming(false);
            if (updated) onChange(updated);
          }}
        />
      )}
      {removing && <RemoveDialog repo={r} onCancel={() => setRemoving(false)} onRemoved={onRemoved} />}
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

// RenameForm renames a repository. Its documents stay, with their
// addresses: the old name leads to the new one.
function RenameForm({ repo: r, onDone }: { repo: Repository; onDone: (r: Repository | null) => void }) {
  const [name, setName] = useState(r.name);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  async function save(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      onDone(await api<Repository>("PATCH", repoPath(r), { name: name.trim() }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="checkout-form" onSubmit={save} aria-label={`Rename ${r.name}`}>
      <input
        name="rename"
        aria-label="New name"
        placeholder="acme/website"
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
        autocomplete="off"
        spellcheck={false}
      />
      <button class="primary small" type="submit" disabled={busy || !name.trim() || name.trim() === r.name}>
        Rename
      </button>
      <button class="quiet small" type="button" onClick={() => onDone(null)}>
        Cancel
      </button>
      <p class="muted small">
        Its documents keep their addresses: links with {r.name} lead to the new name.
        {r.config &&
          ` chopin.toml names it ${r.name}; that entry keeps applying to the renamed repository, and you can change the name there too.`}
      </p>
      <ErrorText error={error} />
    </form>
  );
}

// RemoveDialog asks before a repository goes, and what becomes of its
// documents when it has active ones: archived with it, or the repository
// stays. Documents are never deleted; adding the name again brings back
// the repository with its archived documents.
function RemoveDialog({
  repo: r,
  onCancel,
  onRemoved,
}: {
  repo: Repository;
  onCancel: () => void;
  onRemoved: () => void;
}) {
  const [hasDocs, setHasDocs] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  async function remove(documents: "refuse" | "archive") {
    setBusy(true);
    setError("");
    try {
      await api("DELETE", `${repoPath(r)}?documents=${documents}`);
      onRemoved();
    } catch (err) {
      if (err instanceof ApiError && err.code === "repository-has-documents") setHasDocs(err.message);
      else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div
      class="remove-dialog"
      role="alertdialog"
      aria-label={`Remove ${r.name}`}
      aria-describedby={`remove-${r.nodeId}`}
    >
      <p id={`remove-${r.nodeId}`}>
        {hasDocs ? (
          <>
            {r.name} still has active documents. Archive them and remove {r.name}? They stay in Chopin, archived: add{" "}
            {r.name} again to get them back.
          </>
        ) : (
          <>
            Remove {r.name} from the list? Its documents are never deleted: adding {r.name} again brings back any it
            has.
          </>
        )}
        {r.path && " Chopin lets go of its checkout folder; the folder itself is untouched."}
        {r.config &&
          " chopin.toml lists it: Chopin leaves it removed at the next start. Delete its [[repository]] table there to tidy up."}
      </p>
      <ErrorText error={error} />
      <div class="actions">
        {hasDocs ? (
          <button class="primary small danger" type="button" disabled={busy} onClick={() => remove("archive")}>
            Archive documents and remove
          </button>
        ) : (
          <button class="primary small danger" type="button" disabled={busy} onClick={() => remove("refuse")}>
            Remove {r.name}
          </button>
        )}
        <button class="small" type="button" onClick={onCancel} autoFocus>
          {hasDocs ? "Keep the repository" : "Cancel"}
        </button>
      </div>
    </div>
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
