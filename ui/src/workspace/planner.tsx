// Whether a Planner is attached, and exactly how to attach one.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api";
import type { WorkspaceCtx } from "./context";
import type { PlannerState } from "./reduce";
import type { McpTransport } from "./mcpsetup";

const at = (iso?: string) => (iso ? new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "");

// readsWords says which checkout the attached Planner reads, as the header
// shows it ("reads ~/src/engine @ main"): the path, what follows it, and a
// sentence for its title; null when it reads none.
export function readsWords(p: PlannerState): { path: string; at: string; label: string; sentence: string } | null {
  const c = p.checkout;
  if (p.state !== "attached" || !c) return null;
  if (!c.git) {
    const at = " · Git was not found";
    return {
      path: c.path,
      at,
      label: `reads ${c.path}${at}`,
      sentence: `The Planner reads the local checkout ${c.path}. Git was not found on its computer, so it lists, reads and searches the files without their history.`,
    };
  }
  const rev = c.branch || (c.head ? c.head.slice(0, 7) : "");
  const at = rev ? ` @ ${rev}` : "";
  return {
    path: c.path,
    at,
    label: `reads ${c.path}${at}`,
    sentence:
      `The Planner reads the local checkout ${c.path}` +
      (c.branch ? ` on branch ${c.branch}` : "") +
      (c.head ? ` at commit ${c.head.slice(0, 12)}` : "") +
      ": it can list, read and search the code and its history, and never changes it.",
  };
}

// plannerWords says who holds the document's Planner and how, in a short
// label for the button and a sentence for its title and the dialog.
export function plannerWords(p: PlannerState): { label: string; sentence: string } {
  const who = p.login ? `@${p.login}` : "its owner";
  switch (p.state) {
    case "attached":
      return {
        label: p.login ? `Planner · ${p.login}` : "Planner attached",
        sentence:
          `The Planner is attached from ${who}'s machine${p.since ? ` since ${at(p.since)}` : ""}. Mention @chopin in Chat to ask it.` +
          (readsWords(p) ? " " + readsWords(p)!.sentence : ""),
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

// Reads is the header's "reads <path> @ <branch>": the checkout the
// attached Planner reads, when it reads one.
export function Reads({ ctx }: { ctx: WorkspaceCtx }) {
  const words = readsWords(ctx.state.planner);
  if (!words) return null;
  // A long path is cut at its start, so its last folders and the branch
  // stay in sight; the title has it whole.
  return (
    <span class={"reads" + (ctx.state.planner.checkout?.git ? "" : " reads-nogit")} title={words.sentence}>
      reads{" "}
      <span class="reads-path mono" dir="rtl">
        <bdi dir="ltr">{words.path}</bdi>
      </span>
      <span class="reads-at">{words.at}</span>
    </span>
  );
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
  const bin = session.command || "chopin";
  const docURL = new URL(state.channel.url, location.origin).href;
  const p = state.planner;
  // The agent token, once the person asks to see it; the commands and the
  // MCP snippet carry it from then on.
  const [token, setToken] = useState<string | null>(null);
  const [tokenError, setTokenError] = useState("");
  const showToken = async () => {
    setTokenError("");
    try {
      const r = await api<{ token: string }>("GET", "/api/agent-token");
      setToken(r.token);
    } catch (e) {
      setTokenError(e instanceof ApiError ? e.message : "The token could not be read.");
    }
  };
  const withToken = token ? `--token ${token} ` : "";
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
            <p>
              The client signs in with this computer's agent token (<code>chopin token</code> prints it too):
            </p>
            {token === null ? (
              <div class="copyable">
                <code aria-label="Agent token">••••••••••••</code>
                <button class="quiet small" onClick={showToken}>
                  Show token
                </button>
              </div>
            ) : (
              <>
                <Copyable text={token} label="Agent token" />
                <p class="muted small">
                  Keep the token private: anyone with it can edit your documents. The commands below now carry it;{" "}
                  <code>chopin token --rotate</code> replaces it.
                </p>
              </>
            )}
            {tokenError && (
              <p class="error-text small" role="alert">
                {tokenError}
              </p>
            )}
          </li>
          <li>
            <p>
              Run the bundled Planner client from a checkout of <code>{state.channel.repository}</code> and point it at
              this document:
            </p>
            <Copyable text={`${bin} planner ${withToken}${docURL}`} label="Planner command" />
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
                <Copyable text={`${bin} planner --acp ${a.name} ${withToken}${docURL}`} label={`${a.title} command`} />
              </div>
            ))}
            <p class="muted small">
              Another ACP agent:{" "}
              <code>
                {bin} planner --acp exec {withToken + docURL} -- its command
              </code>
              .
            </p>
          </li>
        </ol>
      )}
      <McpSetup mcpUrl={session.mcpUrl} command={bin} binary={session.binary || bin} />
      {!session.agentUrl && tokenError && (
        <p class="error-text small" role="alert">
          {tokenError}
        </p>
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

// McpSetup shows how to connect a coding agent to Chopin's MCP tools: the
// set-up of docs/mcp.md for the chosen client and transport, with the real
// URL and this chopin's absolute path. None puts the token in a file: over
// HTTP the client reads it from CHOPIN_TOKEN, set by the line shown.
// The set-ups are a chunk of their own, loaded with the dialog: every
// page's first load stays small.
function McpSetup(props: { mcpUrl: string; command: string; binary: string }) {
  const [setups, setSetups] = useState<typeof import("./mcpsetup") | null>(null);
  useEffect(() => {
    import("./mcpsetup").then(setSetups, () => {});
  }, []);
  return setups ? <McpSetupOf {...props} setups={setups} /> : null;
}

function McpSetupOf({
  mcpUrl,
  command,
  binary,
  setups: { mcpClients, mcpSnippet, tokenExport },
}: {
  mcpUrl: string;
  command: string;
  binary: string;
  setups: typeof import("./mcpsetup");
}) {
  const [client, setClient] = useState(mcpClients[0].id);
  const [transport, setTransport] = useState<McpTransport>("http");
  const chosen = mcpClients.find((c) => c.id === client) ?? mcpClients[0];
  const via: McpTransport = chosen.stdioOnly ? "stdio" : transport;
  const snippet = mcpSnippet(client, via, mcpUrl, binary);
  return (
    <section class="mcp-setup" aria-labelledby="mcp-title">
      <h3 id="mcp-title">Connect a coding agent (MCP)</h3>
      <p class="muted small">
        Coding agents can list, read and update Chopin's documents and ask the Planner, over MCP at{" "}
        <code>{mcpUrl}</code> with the agent token, or through <code>chopin mcp</code>, which they launch and which
        needs no token.
      </p>
      <div class="mcp-choices">
        <label>
          Client{" "}
          <select
            value={client}
            onChange={(e) => setClient((e.target as HTMLSelectElement).value)}
            aria-label="MCP client"
          >
            {mcpClients.map((c) => (
              <option value={c.id}>{c.name}</option>
            ))}
          </select>
        </label>
        <span role="radiogroup" aria-label="Connection">
          <label>
            <input
              type="radio"
              name="mcp-transport"
              checked={via === "http"}
              disabled={chosen.stdioOnly}
              onChange={() => setTransport("http")}
            />{" "}
            HTTP
          </label>{" "}
          <label>
            <input type="radio" name="mcp-transport" checked={via === "stdio"} onChange={() => setTransport("stdio")} />{" "}
            <code>chopin mcp</code>
          </label>
        </span>
      </div>
      {via === "http" && chosen.httpNeedsEnv && (
        <>
          <p class="small">
            Where you start {chosen.name}, put the agent token in <code>CHOPIN_TOKEN</code> (it stays out of every
            file):
          </p>
          <CopyableBlock text={tokenExport(command)} label="Token for the environment" />
        </>
      )}
      <p class="small">{chosen.where}</p>
      <CopyableBlock text={snippet.text} label={`${chosen.name} set-up`} />
      {snippet.note && <p class="muted small">{snippet.note}</p>}
      <p class="muted small">
        Anyone with the token can edit your documents; <code>{command} token --rotate</code> replaces it. Every client,
        with what each setting does: docs/mcp.md.
      </p>
    </section>
  );
}

function CopyableBlock({ text, label }: { text: string; label: string }) {
  return (
    <div class="copyable copyable-block">
      <pre aria-label={label}>{text}</pre>
      <button class="quiet small" onClick={() => navigator.clipboard?.writeText(text)}>
        Copy
      </button>
    </div>
  );
}
