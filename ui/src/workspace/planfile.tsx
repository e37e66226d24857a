// The plan as a Markdown file, from the workspace's top bar: Download .md
// (the source exactly, GET .../plan.md) and, for a repository with a local
// checkout, Save to checkout, which never replaces a file changed on disk
// since the last save without asking first.

import { useEffect, useState } from "preact/hooks";
import { api, ApiError, type PlanSave, type Repository } from "../api";
import type { WorkspaceCtx } from "./context";

export function PlanFileActions({ ctx }: { ctx: WorkspaceCtx }) {
  const { channel } = ctx.state;
  const [checkout, setCheckout] = useState<string | null>(null);
  const [note, setNote] = useState<{ text: string; error?: boolean; ask?: boolean } | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api<{ repositories: Repository[] }>("GET", "/api/repositories").then(
      (r) => setCheckout(r.repositories.find((x) => x.name === channel.repository)?.path ?? null),
      () => setCheckout(null),
    );
  }, [channel.repository]);

  async function save(overwrite: boolean) {
    setBusy(true);
    try {
      const r = await api<PlanSave>("POST", `/api/channels/${channel.id}/plan/save`, { overwrite });
      setNote({ text: r.changed ? `Saved to ${r.path} in the checkout.` : `${r.path} already holds this plan.` });
    } catch (e) {
      const changed = e instanceof ApiError && e.code === "file-changed";
      setNote({ text: (e as Error).message, error: !changed, ask: changed });
    } finally {
      setBusy(false);
    }
  }

  return (
    <span class="plan-file">
      <a
        class="button"
        href={`/api/channels/${channel.id}/plan.md`}
        download
        title="The plan's Markdown source"
        aria-label="Download .md"
      >
        <span class="wide-only">Download </span>.md
      </a>
      {checkout && !channel.archivedAt && (
        <button
          disabled={busy}
          onClick={() => save(false)}
          title={`Write the plan into ${checkout}`}
          aria-label="Save to checkout"
        >
          Save<span class="wide-only"> to checkout</span>
        </button>
      )}
      {note && (
        <div class="plan-file-note" role={note.error || note.ask ? "alert" : "status"}>
          <p class={note.error ? "error-text" : ""}>{note.text}</p>
          <div class="actions">
            {note.ask && (
              <button class="danger" disabled={busy} onClick={() => save(true)}>
                Replace the file
              </button>
            )}
            <button class="quiet" onClick={() => setNote(null)}>
              {note.ask ? "Keep the file" : "Close"}
            </button>
          </div>
        </div>
      )}
    </span>
  );
}
