// Whether a Planner is attached, and exactly how to attach one.

import { useEffect, useRef } from "preact/hooks";
import type { WorkspaceCtx } from "./workspace";
import type { PlannerState } from "./reduce";

const at = (iso?: string) => (iso ? new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "");

// plannerWords says who holds the document's Planner and how, in a short
// label for the button and a sentence for its title and the dialog.
export function plannerWords(p: PlannerState): { label: string; sentence: string } {
  const who = p.login ? `@${p.login}` : "its owner";
  switch (p.state) {
    case "attached":
      return {
        label: p.login ? `Planner · ${p.login}` : "Planner attached",
        sentence: `The Planner is attached from ${who}'s machine${p.since ? ` since ${at(p.since)}` : ""}. Mention @chopin in Chat to ask it.`,
      };
    case "grace":
      return {
        label: `Planner away${p.until ? ` until ${at(p.until)}` : ""}`,
        sentence: `${who}'s Planner disconnected and keeps this document${p.until ? ` until ${at(p.until)}` : ""} unless it connects again. Messages to @chopin are not sent meanwhile.`,
      };
    case "disconnected":
      return {
        label: "Planner disconnected · work kept",
        sentence: `${who}'s machine is offline. Its runs and open questions are kept until it reconnects.`,
      };
    case "unknown":
      return { label: "Planner", sentence: "" };
    default:
      return {
        label: "No Planner",
        sentence:
          "No Planner is attached to this document. The Planner is an agent client that runs the model on your machine and attaches to Chopin over the agent connection.",
      };
  }
}

export function PlannerButton({ ctx, onClick }: { ctx: WorkspaceCtx; onClick: () => void }) {
  const p = ctx.state.planner;
  const { label, sentence } = plannerWords(p);
  return (
    <button
      class={"planner-button planner-" + p.state}
      onClick={onClick}
      aria-haspopup="dialog"
      title={sentence || undefined}
    >
      <span class="dot" />
      {label}
    </button>
  );
}

// The agents chopin planner --acp knows by name (package acp's presets).
const acpPresets = [
  { name: "claude", title: "Claude Code" },
  { name: "codex", title: "Codex" },
  { name: "gemini", title: "Gemini CLI" },
];

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
      <p class="muted planner-sentence">{plannerWords(p).sentence || plannerWords({ state: "none" }).sentence}</p>
      {!session.agentUrl ? (
        <p>
          The agent connection is turned off on this Chopin (<code>AGENT=off</code>).
        </p>
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
            <p>
              Run the bundled Planner client from a checkout of <code>{state.channel.repository}</code> and point it at
              this document:
            </p>
            <Copyable text={`chopin planner ${docURL}`} label="Planner command" />
            <p class="muted small">
              <code>chopin planner --help</code> lists the model options. Any client of <code>chopin.agent.v1</code>{" "}
              works the same way.
            </p>
          </li>
          <li>
            <p>
              Or make a coding agent you already run the Planner, through the Agent Client Protocol. It asks before it
              edits or runs anything, as a Decision here:
            </p>
            {acpPresets.map((a) => (
              <div key={a.name} class="acp-preset">
                <p class="small">{a.title}</p>
                <Copyable text={`chopin planner --acp ${a.name} ${docURL}`} label={`${a.title} command`} />
              </div>
            ))}
            <p class="muted small">
              Another ACP agent: <code>chopin planner --acp exec {docURL} -- its command</code>.
            </p>
          </li>
        </ol>
      )}
      <div class="actions">
        <button class="primary" onClick={() => ref.current?.close()}>
          Done
        </button>
      </div>
    </dialog>
  );
}

function Copyable({ text, label }: { text: string; label: string }) {
  return (
    <div class="copyable">
      <code aria-label={label}>{text}</code>
      <button class="quiet small" onClick={() => navigator.clipboard?.writeText(text)}>
        Copy
      </button>
    </div>
  );
}
