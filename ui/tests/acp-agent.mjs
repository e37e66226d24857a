// A test agent of the Agent Client Protocol, written with the official
// TypeScript library (@agentclientprotocol/sdk), that app/acp_node_test.go
// runs as chopin planner --acp exec's agent. It reaches Chopin's host tools
// through the MCP server the bridge offers in session/new (the official MCP
// TypeScript SDK's client), and answers each prompt by its last words:
//
//   "add a risks section"  shows a plan, reads the plan, edits it, streams a reply
//   "may I"                asks permission and says which option was chosen
//   "wait"                 streams "Waiting" and honours session/cancel
//   "bench N"              streams N message chunks (the benchmark)
//
// A description prompt (Chopin's isolated session: a session/new without MCP
// servers, a prompt with <material>) is answered with
// {"description": "Plan for <the material's first line>"} there, and only there.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** @type {Map<string, { mcp: Client | null, cancel: (() => void) | null }>} */
const sessions = new Map();
let next = 0;

const app = acp
  .agent({ name: "chopin-test-agent" })
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { mcpCapabilities: { http: true }, promptCapabilities: { image: false } },
    authMethods: [],
  }))
  .onRequest("session/new", async ({ params }) => {
    if (params.mcpServers.length === 0) {
      // An isolated session: no host tools.
      const sessionId = `node-isolated-${++next}`;
      sessions.set(sessionId, { mcp: null, cancel: null });
      return { sessionId };
    }
    const entry = params.mcpServers[0];
    if (!entry || !("url" in entry)) throw new Error("no HTTP MCP server was offered");
    const headers = Object.fromEntries(entry.headers.map((h) => [h.name, h.value]));
    const mcp = new Client({ name: "chopin-test-agent", version: "1" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers } }));
    const sessionId = `node-session-${++next}`;
    sessions.set(sessionId, { mcp, cancel: null });
    return { sessionId };
  })
  .onNotification("session/cancel", ({ params }) => {
    sessions.get(params.sessionId)?.cancel?.();
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const s = sessions.get(params.sessionId);
    if (!s) throw new Error("no such session");
    const last = params.prompt[params.prompt.length - 1];
    const text = last.type === "text" ? last.text : "";
    const say = (update) => client.notify("session/update", { sessionId: params.sessionId, update });
    const chunk = (t) => say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } });
    const tool = async (name, args) => {
      if (!s.mcp) throw new Error("this session has no MCP server");
      const r = await s.mcp.callTool({ name, arguments: args });
      const content = /** @type {{ type: string, text?: string }[]} */ (r.content);
      if (r.isError) throw new Error(`${name}: ${content[0]?.text}`);
      return content[0]?.text ?? "";
    };
    const plan = (status) =>
      say({
        sessionUpdate: "plan",
        entries: [
          { content: "Read the plan", priority: "high", status: "completed" },
          { content: "Add risks", priority: "high", status },
        ],
      });

    const material = params.prompt
      .map((b) => (b.type === "text" ? /<material>\n([^\n]*)/.exec(b.text) : null))
      .find((m) => m);
    const bench = /bench (\d+)$/.exec(text);
    if (material && !s.mcp) {
      const description = "Plan for " + material[1].replace(/^# /, "");
      await chunk(text.includes("only JSON") ? JSON.stringify({ description }) : description);
    } else if (bench) {
      for (let i = 0; i < Number(bench[1]); i++) await chunk("x");
    } else if (text.endsWith("add a risks section")) {
      await plan("in_progress");
      const current = await tool("read_plan", {});
      const revision = Number(/revision: (\d+)/.exec(current)?.[1] ?? 0);
      await tool("edit_plan", { revision, operations: [{ op: "insert_root", content: "## Risks\n\nNone yet." }] });
      await plan("completed");
      await chunk("I added ");
      await chunk("a Risks section.");
    } else if (text.endsWith("may I")) {
      const r = await client.request("session/request_permission", {
        sessionId: params.sessionId,
        toolCall: { toolCallId: "edit-1", title: "Edit main.go" },
        options: [
          { optionId: "yes-once", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
      });
      await chunk("Permission: " + (r.outcome.outcome === "selected" ? r.outcome.optionId : "cancelled"));
    } else if (text.endsWith("wait")) {
      await chunk("Waiting");
      await new Promise((resolve) => (s.cancel = () => resolve(undefined)));
      return { stopReason: "cancelled" };
    }
    return { stopReason: "end_turn" };
  });

const conn = app.connect(
  acp.ndJsonStream(
    /** @type {WritableStream<Uint8Array>} */ (Writable.toWeb(process.stdout)),
    /** @type {ReadableStream<Uint8Array>} */ (Readable.toWeb(process.stdin)),
  ),
);
await conn.closed;
process.exit(0);
