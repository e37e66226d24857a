// Whether a Planner is attached, and exactly how to attach one.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api";
import type { WorkspaceCtx } from "./context";
import type { PlannerState } from "./reduce";
import type { ModelState } from "../protocol";
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

// modelLabel names the model the attached Planner answers with, as the
// composer shows it: the document's choice, else the client's default;
// "" when its client reported no models.
export function modelLabel(m?: ModelState): string {
  if (!m?.offered) return "";
  const id = m.model || m.default?.id;
  if (!id) return "";
  const known = m.models.find((x) => x.id === id);
  return (m.model && m.modelName) || known?.name || id;
}

// plannerWords says who holds the document's Planner and how, in a short
// label for the button and a sentence for its title and the dialog. The
// label names the model it answers with, never the computer's login.
export function plannerWords(p: PlannerState, m?: ModelState): { label: string; sentence: string } {
  const who = p.login ? `@${p.login}` : "its owner";
  switch (p.state) {
    case "attached":
      return {
        label: `Planner · ${modelLabel(m) || "attached"}`,
        sentence:
          `The Planner is attached${p.since ? ` since ${at(p.since)}` : ""}${modelLabel(m) ? ` and answers with ${modelLabel(m)}` : ""}. Mention @chopin in Chat to ask it.` +
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
  const { label, sentence } = plannerWords(p, ctx.state.model);
  return (
    <button
      class={"planner-button planner-" + p.state}
      onClick={onClick}
      aria-haspopup="dialog"
      title={sentence || undefined}
    >
      <span class="dot" />
      <span class="planner-label">{label}</span>
    </button>
  );
}

// The agents chopin planner --acp knows by name (package acp's presets),
// with how to install each and sign in (docs/acp.md).
const acpPresets = [
  {
    name: "claude",
    title: "Claude Code",
    install: "npm install -g @zed-industries/claude-agent-acp",
    note: "Optional: without it, npx fetches the adapter at the first start. Sign in by running claude once, or set ANTHROPIC_API_KEY.",
  },
  {
    name: "codex",
    title: "Codex",
    install: "npm install -g @zed-industries/codex-acp",
    note: "Optional: without it, npx fetches the adapter at the first start. Sign in with codex login, or set OPENAI_API_KEY.",
  },
  {
    name: "gemini",
    title: "Gemini CLI",
    install: "npm install -g @google/gemini-cli",
    note: "Then run gemini once to sign in, or set GEMINI_API_KEY.",
  },
];

// ModelServer is one entry of GET /api/model-servers.
export interface ModelServer {
  id: string;
  name: string;
  baseUrl: string;
  start: string;
  pull?: string;
  running: boolean;
  models: string[];
}

// portOf is the port a server's base URL names, for "on port 11434".
const portOf = (baseUrl: string) => {
  try {
    return new URL(baseUrl).port;
  } catch {
    return "";
  }
};

export function ConnectDialog({ ctx, onClose }: { ctx: WorkspaceCtx; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const { session, state } = ctx;
  const bin = session.command || "chopin";
  const docURL = new URL(state.channel.url, location.origin).href;
  const p = state.planner;
  return (
    <dialog ref={ref} class="connect-dialog" onClose={onClose} aria-labelledby="connect-title">
      <h2 id="connect-title">Connect a Planner</h2>
      <p class="muted planner-sentence">
        {plannerWords(p, state.model).sentence || plannerWords({ state: "none" }).sentence}
      </p>
      {!session.agentUrl ? (
        <p>
          The agent connection is turned off on this Chopin (<code>AGENT=off</code>).
        </p>
      ) : (
        <>
          <BundledPlanner bin={bin} docURL={docURL} />
          <section class="connect-section" aria-labelledby="acp-title">
            <h3 id="acp-title">Or a coding agent as the Planner (ACP)</h3>
            <p class="small">
              A coding agent you already use can be the Planner through the Agent Client Protocol. It asks before it
              edits or runs anything, as a Decision here.
            </p>
            {acpPresets.map((a) => (
              <div key={a.name} class="acp-preset">
                <p class="small">
                  <strong>{a.title}</strong>: install, then run
                </p>
                <Copyable text={a.install} label={`${a.title} install`} />
                <Copyable text={`${bin} planner --acp ${a.name} ${docURL}`} label={`${a.title} command`} />
                <p class="muted small">{a.note}</p>
              </div>
            ))}
            <p class="muted small">
              Another ACP agent:{" "}
              <code>
                {bin} planner --acp exec {docURL} -- its command
              </code>
              .
            </p>
          </section>
        </>
      )}
      <McpSetup mcpUrl={session.mcpUrl} command={bin} binary={session.binary || bin} />
      {session.agentUrl && <OwnClient agentUrl={session.agentUrl} bin={bin} />}
      <div class="actions">
        <button class="primary" onClick={() => ref.current?.close()}>
          Done
        </button>
      </div>
    </dialog>
  );
}

// BundledPlanner is chopin planner with a model server on this computer:
// the servers found running, with their models and the exact command, and
// how to start the others.
function BundledPlanner({ bin, docURL }: { bin: string; docURL: string }) {
  const [servers, setServers] = useState<ModelServer[] | null>(null);
  const [error, setError] = useState("");
  const [looking, setLooking] = useState(false);
  const look = async () => {
    setLooking(true);
    setError("");
    try {
      setServers((await api<{ servers: ModelServer[] }>("GET", "/api/model-servers")).servers);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Chopin could not look for a model server.");
    } finally {
      setLooking(false);
    }
  };
  useEffect(() => {
    look();
  }, []);
  const running = (servers ?? []).filter((s) => s.running);
  const stopped = (servers ?? []).filter((s) => !s.running);
  return (
    <section class="connect-section" aria-labelledby="bundled-title">
      <h3 id="bundled-title">The bundled Planner, with a model on this computer</h3>
      <p class="small">
        <code>{bin} planner</code> answers @chopin with a model on a model server you run: Ollama, llama.cpp, LM Studio
        or vLLM. Nothing leaves your computer.
      </p>
      {servers === null && !error && (
        <p class="muted small" role="status">
          Looking for a model server on this computer…
        </p>
      )}
      {error && (
        <p class="error-text small" role="alert">
          {error}
        </p>
      )}
      {running.map((s) => (
        <FoundServer key={s.baseUrl} server={s} bin={bin} docURL={docURL} />
      ))}
      {servers !== null && running.length === 0 && (
        <p class="small" role="status">
          No model server answers on this computer yet. Start one of these, then run the Planner:
        </p>
      )}
      {servers !== null && stopped.length > 0 && (
        <details class="model-servers" open={running.length === 0}>
          <summary class="small">
            {running.length ? "Other model servers" : "Model servers and how to start each"}
          </summary>
          <ul class="server-list">
            {stopped.map((s) => (
              <li key={s.baseUrl}>
                <p class="small">
                  <strong>{s.name}</strong> (port {portOf(s.baseUrl)})
                </p>
                <Copyable text={s.start} label={`Start ${s.name}`} />
                {s.pull && <Copyable text={s.pull} label={`A model for ${s.name}`} />}
              </li>
            ))}
          </ul>
        </details>
      )}
      {servers !== null && running.length === 0 && (
        <>
          <p class="small">With the server running:</p>
          <Copyable text={`${bin} planner ${docURL}`} label="Planner command" />
          <p class="muted small">
            It uses the first of these servers that answers, or the one you name with <code>--base-url</code>.
          </p>
        </>
      )}
      {servers !== null && (
        <button class="quiet small" onClick={look} disabled={looking}>
          {looking ? "Looking…" : "Look again"}
        </button>
      )}
    </section>
  );
}

// FoundServer is a model server that answered: its models, a choice of
// one, and the command that runs the Planner with it.
function FoundServer({ server, bin, docURL }: { server: ModelServer; bin: string; docURL: string }) {
  const [model, setModel] = useState(server.models[0] ?? "");
  const command = `${bin} planner --base-url ${server.baseUrl}${model ? ` --model ${shellQuote(model)}` : ""} ${docURL}`;
  return (
    <div class="found-server" aria-label={`${server.name} found`} role="group">
      <p class="small">
        <span class="found-dot" aria-hidden="true" /> <strong>{server.name}</strong> is running at{" "}
        <code>{server.baseUrl}</code>
        {server.models.length === 0
          ? " but has no models yet."
          : ` with ${server.models.length === 1 ? "one model" : `${server.models.length} models`}.`}
      </p>
      {server.models.length === 0 && server.pull && (
        <Copyable text={server.pull} label={`A model for ${server.name}`} />
      )}
      {server.models.length > 1 && (
        <label class="small">
          Model{" "}
          <select
            value={model}
            onChange={(e) => setModel((e.target as HTMLSelectElement).value)}
            aria-label={`${server.name} model`}
          >
            {server.models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
      )}
      {server.models.length === 1 && (
        <p class="small">
          Model: <code>{server.models[0]}</code>
        </p>
      )}
      {server.models.length > 0 && <Copyable text={command} label="Planner command" />}
      {server.models.length > 1 && (
        <p class="muted small">Anyone in the document can switch among its models later, with the composer's picker.</p>
      )}
    </div>
  );
}

// shellQuote quotes a model name for a POSIX shell when it needs it.
const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replaceAll("'", `'\\''`) + "'");

// OwnClient is the agent connection's URL and token, for a client of
// chopin.agent.v1 a person writes: chopin planner needs neither.
function OwnClient({ agentUrl, bin }: { agentUrl: string; bin: string }) {
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
  return (
    <details class="connect-section own-client">
      <summary>A Planner client you write yourself</summary>
      <p class="small">
        Any client of <code>chopin.agent.v1</code> attaches at this URL, signed in with this computer's agent token (
        <code>{bin} token</code> prints it too). <code>{bin} planner</code> finds both itself.
      </p>
      <Copyable text={agentUrl} label="Agent URL" />
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
            Keep the token private: anyone with it can edit your documents. <code>{bin} token --rotate</code> replaces
            it.
          </p>
        </>
      )}
      {tokenError && (
        <p class="error-text small" role="alert">
          {tokenError}
        </p>
      )}
    </details>
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
