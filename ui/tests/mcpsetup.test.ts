// The Connect dialog's MCP set-up snippets (src/workspace/mcpsetup.ts) are
// docs/mcp.md's, word for word once the docs' example URL and binary are
// this instance's: every client, both ways in. None holds the token.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mcpClients, mcpSnippet, shellWord, tokenExport } from "../src/workspace/mcpsetup";

const docURL = "http://127.0.0.1:8787/mcp";
const docBin = "/home/ada/go/bin/chopin";
const url = "http://127.0.0.1:40123/mcp";
const bin = "/home/bo/src/chopin/chopin";

// docSetups is each "### <client>" section of the docs' Set-up: its fenced
// blocks, split at comment lines (# HTTP, # chopin mcp) into one set-up
// each, with this instance's URL and binary put in.
function docSetups(): Map<string, string[]> {
  const md = readFileSync(join(process.cwd(), "..", "docs", "mcp.md"), "utf8");
  const setup = md.slice(md.indexOf("## Set-up"), md.indexOf("## Transport"));
  const out = new Map<string, string[]>();
  for (const section of setup.split(/^### /m).slice(1)) {
    const name = section.slice(0, section.indexOf("\n")).replace(/ \(.*$/, "");
    const blocks: string[] = [];
    for (const m of section.matchAll(/```\w*\n([\s\S]*?)```/g)) {
      let cur: string[] = [];
      const flush = () => {
        if (cur.length) blocks.push(cur.join("\n"));
        cur = [];
      };
      for (const line of m[1].trimEnd().split("\n")) {
        if (line.startsWith("# ")) flush();
        else cur.push(line);
      }
      flush();
    }
    out.set(
      name,
      blocks.map((b) => b.replaceAll(docURL, url).replaceAll('"$(command -v chopin)"', bin).replaceAll(docBin, bin)),
    );
  }
  return out;
}

// same compares a snippet with the docs' set-up: JSON as values (the
// docs write it compactly), everything else as text.
function same(snippet: string, doc: string): boolean {
  try {
    return JSON.stringify(JSON.parse(snippet)) === JSON.stringify(JSON.parse(doc));
  } catch {
    return snippet === doc;
  }
}

test("every client's set-ups are the docs', with this URL and binary", () => {
  const docs = docSetups();
  assert.deepEqual(
    mcpClients.map((c) => c.name).sort(),
    [...docs.keys()].sort(),
    "the dialog offers exactly the docs' clients",
  );
  for (const c of mcpClients) {
    const want = docs.get(c.name)!;
    const got = new Set(
      (["http", "stdio"] as const).map((t) => mcpSnippet(c.id, t, url, bin).text).filter((t) => t !== ""),
    );
    for (const g of got)
      assert.ok(
        want.some((d) => same(g, d)),
        `${c.name}: the dialog's\n${g}\nis not in docs/mcp.md:\n${want.join("\n--\n")}`,
      );
    for (const d of want)
      assert.ok(
        [...got].some((g) => same(g, d)),
        `${c.name}: docs/mcp.md's\n${d}\nis not in the dialog`,
      );
  }
});

test("no snippet holds the token, and chopin mcp is launched by its absolute path", () => {
  for (const c of mcpClients) {
    for (const t of ["http", "stdio"] as const) {
      const s = mcpSnippet(c.id, t, url, bin);
      assert.ok(!/chopin_a_/.test(s.text + (s.note ?? "")), `${c.id} ${t} holds a token`);
      if (t === "stdio" || c.stdioOnly) assert.ok(s.text.includes(bin), `${c.id} ${t} names ${bin}`);
    }
  }
  assert.equal(shellWord("/a b/chopin"), "'/a b/chopin'");
  assert.equal(
    mcpSnippet("claude-code", "stdio", url, "/a b/chopin").text,
    "claude mcp add --scope user chopin -- '/a b/chopin' mcp",
  );
  assert.equal(tokenExport("/x/chopin"), 'export CHOPIN_TOKEN="$(/x/chopin token)"');
});
