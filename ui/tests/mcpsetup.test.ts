// The Connect dialog's MCP set-up snippets (src/workspace/mcpsetup.ts):
// every client and transport names the real URL and the token where it
// needs one, and the JSON ones are JSON a client reads.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mcpClients, mcpSnippet } from "../src/workspace/mcpsetup";

const url = "http://127.0.0.1:8787/mcp";
const token = "chopin_a_secret";

test("every client has an HTTP and a chopin mcp set-up", () => {
  assert.equal(mcpClients.length, 6);
  for (const c of mcpClients) {
    const http = mcpSnippet(c.id, "http", url, token);
    assert.ok(http.text.includes(url), `${c.id} over HTTP names the URL`);
    assert.ok((http.text + (http.note ?? "")).includes(token), `${c.id} over HTTP carries the token`);
    const stdio = mcpSnippet(c.id, "stdio", url, token);
    assert.ok(stdio.text.includes("chopin") && stdio.text.includes("mcp"), `${c.id} launches chopin mcp`);
    assert.ok(!stdio.text.includes(token) && !stdio.text.includes(url), `${c.id} over chopin mcp needs neither`);
  }
});

test("the JSON set-ups parse, with the header where the client reads it", () => {
  const servers = (id: string, t: "http" | "stdio") => {
    const v = JSON.parse(mcpSnippet(id, t, url, token).text);
    return (v.mcpServers ?? v.servers).chopin;
  };
  assert.deepEqual(servers("cursor", "http"), { url, headers: { Authorization: `Bearer ${token}` } });
  assert.deepEqual(servers("gemini", "http"), { httpUrl: url, headers: { Authorization: `Bearer ${token}` } });
  assert.deepEqual(servers("vscode", "http"), { type: "http", url, headers: { Authorization: `Bearer ${token}` } });
  assert.deepEqual(servers("vscode", "stdio"), { type: "stdio", command: "chopin", args: ["mcp"] });
  assert.deepEqual(servers("claude-desktop", "stdio"), { command: "chopin", args: ["mcp"] });
  assert.equal(
    mcpSnippet("claude-code", "http", url, token).text,
    `claude mcp add --transport http chopin ${url} --header "Authorization: Bearer ${token}"`,
  );
});
