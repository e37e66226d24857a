// Chopin's MCP tools through a client nobody here wrote: the official
// TypeScript SDK (@modelcontextprotocol/sdk, pinned in package-lock.json)
// connects over Streamable HTTP and over `chopin mcp` stdio, lists the
// tools, and creates, reads (paging to the end), updates (a stale revision,
// then the right one), archives and restores a document. app/mcp_node_test.go
// runs it against the real app; each step is reported as a line
//
//   @@ {"step": "...", "ok": true} or {"step": "...", "ok": false, "error": "..."}
//
//   node tests/mcp.mjs MCP_URL TOKEN REPOSITORY CHOPIN_BINARY
// (the binary's data and config directories come from the environment)

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [mcpUrl, token, repository, chopin] = process.argv.slice(2);
if (!chopin) {
  console.error("usage: node tests/mcp.mjs MCP_URL TOKEN REPOSITORY CHOPIN_BINARY");
  process.exit(2);
}

let failed = false;
async function step(name, fn) {
  try {
    await fn();
    console.log("@@ " + JSON.stringify({ step: name, ok: true }));
  } catch (e) {
    failed = true;
    console.log("@@ " + JSON.stringify({ step: name, ok: false, error: String(e?.stack ?? e) }));
    throw e;
  }
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const text = (res) =>
  res.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");

const toolNames = [
  "archive_document",
  "create_document",
  "invoke_planner",
  "list_documents",
  "list_repositories",
  "list_versions",
  "read_document",
  "rename_document",
  "restore_document",
  "update_document",
  "upload_image",
];

// A plan over one result's 16,000 bytes, so reading it takes several pages.
function bigPlan(title) {
  let s = `# ${title}\n\n`;
  for (let i = 0; s.length < 40_000; i++) s += `Step ${i}: ${"do the thing ".repeat(20)}\n\n`;
  return s;
}

async function walk(transportName, connect) {
  const client = new Client({ name: `node-sdk-${transportName}`, version: "1.0.0" });
  await step(`${transportName}: connect`, async () => {
    await client.connect(connect());
    const info = client.getServerVersion();
    check(info?.name === "chopin", `server name ${JSON.stringify(info)}`);
    check(client.getServerCapabilities()?.tools, "no tools capability");
    check(client.getInstructions()?.includes("- update_document: "), "instructions do not list update_document");
  });
  await step(`${transportName}: list tools`, async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    check(JSON.stringify(names) === JSON.stringify(toolNames), `tools ${names}`);
  });
  const title = `Plan over ${transportName}`;
  const plan = bigPlan(title);
  let id = "";
  await step(`${transportName}: create_document`, async () => {
    const res = await client.callTool({
      name: "create_document",
      arguments: { idempotencyKey: `node-${transportName}`, repository, title, plan },
    });
    check(!res.isError, text(res));
    id = res.structuredContent.id;
    check(res.structuredContent.revision === 0 && res.structuredContent.replayed === false, text(res));
    check(
      JSON.stringify(JSON.parse(text(res))) === JSON.stringify(res.structuredContent),
      "text is not the structured JSON",
    );
  });
  let revision = -1;
  await step(`${transportName}: read_document to the end`, async () => {
    let args = { id };
    let got = "";
    for (let pages = 0; ; pages++) {
      check(pages < 20, "paging does not end");
      const res = await client.callTool({ name: "read_document", arguments: args });
      check(!res.isError, text(res));
      const t = text(res);
      check(Buffer.byteLength(t) <= 16000, `a page of ${Buffer.byteLength(t)} bytes`);
      revision = res.structuredContent.revision;
      got += t.slice(t.indexOf("\ntext:\n") + "\ntext:\n".length);
      const next = /^next: read_document (\{.*\})$/m.exec(t);
      if (!next) {
        check(/^next: none/m.test(t), "no next: line");
        check(pages >= 2, `only ${pages + 1} page(s)`);
        break;
      }
      args = JSON.parse(next[1]);
      check(args.id === id, `next names ${args.id}`);
    }
    check(got === plan, `paging gave ${got.length} characters, want ${plan.length}`);
  });
  await step(`${transportName}: update_document with a stale revision`, async () => {
    const res = await client.callTool({
      name: "update_document",
      arguments: { id, revision: revision + 5, plan: plan + "More.\n", idempotencyKey: `${transportName}-stale` },
    });
    check(res.isError, "a stale revision was accepted");
    check(res.structuredContent.code === "revision-conflict", text(res));
    check(res.structuredContent.currentRevision === revision, text(res));
  });
  await step(`${transportName}: update_document`, async () => {
    const res = await client.callTool({
      name: "update_document",
      arguments: { id, revision, plan: plan + "More.\n", idempotencyKey: `${transportName}-right` },
    });
    check(!res.isError, text(res));
    check(res.structuredContent.revision === revision + 1, text(res));
  });
  await step(`${transportName}: archive_document`, async () => {
    const res = await client.callTool({ name: "archive_document", arguments: { id } });
    check(!res.isError && res.structuredContent.archivedAt, text(res));
  });
  await step(`${transportName}: restore_document`, async () => {
    const res = await client.callTool({ name: "restore_document", arguments: { id } });
    check(!res.isError && !res.structuredContent.archivedAt, text(res));
  });
  await client.close();
}

try {
  await walk(
    "http",
    () =>
      new StreamableHTTPClientTransport(new URL(mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
  );
  await walk(
    "stdio",
    () => new StdioClientTransport({ command: chopin, args: ["mcp"], env: process.env, stderr: "inherit" }),
  );
} catch {
  // reported by step
}
process.exit(failed ? 1 : 0);
