// Whether a Planner is attached, and exactly how to attach one.

import { useEffect, useRef } from "preact/hooks";
import type { WorkspaceCtx } from "./workspace";

export interface PlannerState {
  state: "attached" | "grace" | "disconnected" | "none" | "unknown" | string;
  login?: string;
  [k: string]: unknown;
}

export function PlannerButton({ ctx, onClick }: { ctx: WorkspaceCtx; onClick: () => void }) {
  const p = ctx.state.planner;
  const label =
    p.state === "attached" ? "Planner attached" : p.state === "grace" ? "Planner reconnecting" : p.state === "unknown" ? "Planner" : "No Planner";
  return (
    <button class={"planner-button planner-" + p.state} onClick={onClick} aria-haspopup="dialog">
      <span class="dot" />
      {label}
    </button>
  );
}

export function ConnectDialog({ ctx, onClose }: { ctx: WorkspaceCtx; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const { session, state } = ctx;
  const docURL = new URL(state.channel.url, location.origin).href;
  const p = state.planner;
  return (
    <dialog ref={ref} class="connect-dialog" onClose={onClose} aria-labelledby="connect-title">
      <h2 id="connect-title">Connect a Planner</h2>
      <p class="muted">
        {p.state === "attached"
          ? `A Planner is attached${p.login ? ` (${p.login})` : ""}. Mention @chopin in Chat to ask it.`
          : "No Planner is attached to this document. The Planner is an agent client that runs the model on your machine and attaches to Chopin over the agent connection."}
      </p>
      {!session.agentUrl ? (
        <p>The agent connection is turned off on this Chopin (<code>AGENT=off</code>).</p>
      ) : (
        <ol class="steps">
          <li>
            <p>The agent connection's URL:</p>
            <Copyable text={session.agentUrl} label="Agent URL" />
          </li>
          <li>
            <p>The client signs in with the local agent token, which this command prints:</p>
            <Copyable text="chopin token" label="Token command" />
          </li>
          <li>
            <p>Run the bundled Planner client from a checkout of <code>{state.channel.repository}</code> and point it at this document:</p>
            <Copyable text={`chopin planner ${docURL}`} label="Planner command" />
            <p class="muted small">
              <code>chopin planner --help</code> lists the model options. Any client of <code>chopin.agent.v1</code> works the same way.
            </p>
          </li>
        </ol>
      )}
      <div class="actions">
        <button class="primary" onClick={() => ref.current?.close()}>Done</button>
      </div>
    </dialog>
  );
}

function Copyable({ text, label }: { text: string; label: string }) {
  return (
    <div class="copyable">
      <code aria-label={label}>{text}</code>
      <button class="quiet small" onClick={() => navigator.clipboard?.writeText(text)}>Copy</button>
    </div>
  );
}
