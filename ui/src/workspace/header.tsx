// The document's own actions in its header: rename in place, archive with
// Undo, restore from the archived banner, and showing or hiding Chat beside
// the plan. Refusals are said in plain words; the address follows a rename.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, pathOf, type Channel } from "../api";
import { canonicalize, onLinkClick } from "../router";
import { showToast } from "../toast";
import type { WorkspaceCtx } from "./context";
import "./layout.css";

const chatKey = "chopin:chat-hidden";

// useChatShown is whether Chat shows beside the plan on a wide screen,
// remembered by this browser.
export function useChatShown(): [boolean, (shown: boolean) => void] {
  const [shown, setShown] = useState(() => {
    try {
      return localStorage.getItem(chatKey) !== "1";
    } catch {
      return true;
    }
  });
  const set = (v: boolean) => {
    setShown(v);
    try {
      if (v) localStorage.removeItem(chatKey);
      else localStorage.setItem(chatKey, "1");
    } catch {
      /* remembered for this page only */
    }
  };
  return [shown, set];
}

export function ChatToggle({ shown, onChange }: { shown: boolean; onChange: (shown: boolean) => void }) {
  return (
    <button
      class="quiet chat-toggle"
      aria-pressed={shown}
      aria-controls="chat-pane"
      title={shown ? "Hide Chat to give the plan the whole width" : "Show Chat beside the plan"}
      onClick={() => onChange(!shown)}
    >
      {shown ? "Hide Chat" : "Show Chat"}
    </button>
  );
}

// renameWords says why a rename was refused, in plain words.
export function renameWords(e: unknown, title: string, repository: string): string {
  if (!(e instanceof ApiError)) return String(e);
  switch (e.code) {
    case "title-taken":
      return `Another document in ${repository} is already called “${title}”. Choose another title.`;
    case "invalid-title":
      return "A title is one line of 1 to 120 characters, without control characters.";
    case "channel-archived":
      return "This document is archived. Restore it to rename it.";
    default:
      return e.message;
  }
}

// DocTitle is the document's title, which a writer can rename in place:
// Enter saves, Escape leaves it as it was.
export function DocTitle({ ctx }: { ctx: WorkspaceCtx }) {
  const { state } = ctx;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(state.channel.title);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const opener = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (editing) input.current?.select();
  }, [editing]);
  useEffect(() => {
    if (!state.canEdit) setEditing(false);
  }, [state.canEdit]);

  const close = () => {
    setEditing(false);
    setError("");
    requestAnimationFrame(() => opener.current?.focus());
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const title = draft.trim();
    if (title === state.channel.title) return close();
    setBusy(true);
    try {
      const ch = await api<Channel>("PATCH", `/api/channels/${state.channel.id}`, { title });
      canonicalize(pathOf(ch.url));
      close();
    } catch (err) {
      setError(renameWords(err, title, state.channel.repository));
    } finally {
      setBusy(false);
    }
  };

  if (editing)
    return (
      <form class="rename-title" onSubmit={save}>
        <input
          ref={input}
          aria-label="Document title"
          value={draft}
          maxLength={120}
          disabled={busy}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? "rename-error" : undefined}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Escape" && (e.preventDefault(), close())}
        />
        <button class="primary" type="submit" disabled={busy}>
          Save
        </button>
        <button type="button" class="quiet" onClick={close}>
          Cancel
        </button>
        {error && (
          <p id="rename-error" class="rename-error" role="alert">
            {error}
          </p>
        )}
      </form>
    );
  return (
    <div class="doc-title-row">
      <h1 class="doc-title">{state.channel.title}</h1>
      {state.canEdit && (
        <button
          ref={opener}
          class="quiet rename-button"
          title="Rename this document"
          aria-label="Rename document"
          onClick={() => (setDraft(state.channel.title), setEditing(true))}
        >
          <span aria-hidden="true">✎</span>
          <span class="rename-word"> Rename</span>
        </button>
      )}
    </div>
  );
}

async function setArchived(id: string, archived: boolean): Promise<Channel> {
  return api<Channel>("POST", `/api/channels/${id}/${archived ? "archive" : "restore"}`);
}

// ArchiveButton archives the document, with Undo in a toast for a few seconds.
export function ArchiveButton({ ctx }: { ctx: WorkspaceCtx }) {
  const { state } = ctx;
  if (!state.canManage || state.channel.archivedAt || state.connection === "deleted") return null;
  const archive = async () => {
    const { id, title } = state.channel;
    try {
      await setArchived(id, true);
      showToast({
        text: `Archived “${title}”. It is read-only until restored.`,
        action: { label: "Undo", run: () => setArchived(id, false).then(() => undefined) },
      });
    } catch (e) {
      showToast({ text: `Could not archive “${title}”: ${(e as Error).message}` });
    }
  };
  return (
    <button class="quiet archive-button" title="Archive: read-only, out of the document list" onClick={archive}>
      Archive
    </button>
  );
}

// ArchivedBar says an archived document is read-only, with Restore for
// whoever may restore it.
// stoppedAfter is how many failed reconnects in a row (about two seconds)
// mean Chopin itself is not running, rather than a blip.
export const stoppedAfter = 3;

// StoppedBar says, once reconnecting keeps failing, that Chopin is not
// running and the command that starts it: the running binary's full path
// when chopin is not on the PATH, as the About page says it.
export function StoppedBar({ ctx }: { ctx: WorkspaceCtx }) {
  const [copied, setCopied] = useState(false);
  if (ctx.state.connection !== "offline" || ctx.socket.failures < stoppedAfter) return null;
  const command = ctx.session.command || "chopin";
  return (
    <div class="archived-bar stopped-bar" role="alert">
      <span>
        Chopin is not running, so this tab cannot reach it. Start it again with <code>{command}</code> in a terminal;
        the tab reconnects by itself and keeps your unsent edits.
      </span>
      <button
        class="restore-button"
        aria-label="Copy the start command"
        onClick={() =>
          navigator.clipboard?.writeText(command).then(
            () => setCopied(true),
            () => {},
          )
        }
      >
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}

export function ArchivedBar({ ctx, docsHref }: { ctx: WorkspaceCtx; docsHref: string }) {
  const { state } = ctx;
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  if (!state.channel.archivedAt) return null;
  const restore = async () => {
    setBusy(true);
    setError("");
    try {
      await setArchived(state.channel.id, false);
    } catch (e) {
      setError(`Could not restore it: ${(e as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="archived-bar" role="status">
      <span>Archived: read-only.</span>{" "}
      {state.canManage ? (
        <button class="restore-button" disabled={busy} onClick={restore}>
          Restore
        </button>
      ) : (
        <span>
          Someone who may edit {state.channel.repository} can restore it from the{" "}
          <a href={docsHref + "?includeArchived=true"} onClick={onLinkClick}>
            document list
          </a>
          .
        </span>
      )}
      {error && <span class="error-text"> {error}</span>}
    </div>
  );
}
