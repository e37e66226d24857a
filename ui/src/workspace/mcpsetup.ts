// The set-up of each MCP client for Chopin's local agent MCP tools, as the
// Connect dialog shows it: over HTTP at /mcp, the client reading the agent
// token from the environment variable CHOPIN_TOKEN (or, VS Code, asking
// for it once), or through `chopin mcp`, which the client launches by its
// absolute path. No set-up puts the token in a file. They are the set-ups
// of docs/mcp.md, word for word with this instance's URL and binary
// (tests/mcpsetup.test.ts compares them with the docs).

export type McpTransport = "http" | "stdio";

export interface McpClient {
  id: string;
  name: string;
  where: string; // where the snippet goes
  httpNeedsEnv: boolean; // over HTTP, the client reads CHOPIN_TOKEN from its environment
  stdioOnly?: boolean; // the client launches commands only
}

export const mcpClients: McpClient[] = [
  { id: "claude-code", name: "Claude Code", where: "Run in a terminal:", httpNeedsEnv: true },
  { id: "codex", name: "Codex", where: "Add to ~/.codex/config.toml:", httpNeedsEnv: true },
  { id: "gemini", name: "Gemini CLI", where: "Add to ~/.gemini/settings.json:", httpNeedsEnv: true },
  { id: "cursor", name: "Cursor", where: "Add to ~/.cursor/mcp.json:", httpNeedsEnv: true },
  {
    id: "vscode",
    name: "VS Code",
    where: "Add to .vscode/mcp.json in your project (or the user configuration):",
    httpNeedsEnv: false,
  },
  {
    id: "claude-desktop",
    name: "Claude Desktop",
    where: "Add to claude_desktop_config.json (Settings → Developer → Edit Config):",
    httpNeedsEnv: false,
    stdioOnly: true,
  },
  { id: "inspector", name: "MCP Inspector", where: "Run in a terminal:", httpNeedsEnv: true },
];

const json = (v: unknown) => JSON.stringify(v, null, 2);

// shellWord quotes s for a POSIX shell when it needs it.
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replaceAll("'", `'\\''`) + "'";
}

// tokenExport is the line that puts the token in CHOPIN_TOKEN, for the
// shell the client is started from; command runs this Chopin.
export const tokenExport = (command: string) => `export CHOPIN_TOKEN="$(${command} token)"`;

// mcpSnippet is what to paste for client to reach url (Chopin's /mcp) over
// transport; bin is the absolute path of this chopin, which a client that
// launches chopin mcp needs (a desktop app's PATH is not the shell's).
export function mcpSnippet(
  client: string,
  transport: McpTransport,
  url: string,
  bin: string,
): { text: string; note?: string } {
  const stdio = { command: bin, args: ["mcp"] };
  const http = transport === "http";
  switch (client) {
    case "claude-code":
      return http
        ? {
            text: `claude mcp add --scope user --transport http chopin ${url} \\\n  --header 'Authorization: Bearer \${CHOPIN_TOKEN}'`,
            note: "Keep the single quotes: Claude Code reads CHOPIN_TOKEN from its environment when it connects, so its configuration holds the variable's name, not the token.",
          }
        : { text: `claude mcp add --scope user chopin -- ${shellWord(bin)} mcp` };
    case "codex":
      return {
        text: http
          ? `[mcp_servers.chopin]\nurl = ${JSON.stringify(url)}\nbearer_token_env_var = "CHOPIN_TOKEN"\ndefault_tools_approval_mode = "approve"`
          : `[mcp_servers.chopin]\ncommand = ${JSON.stringify(bin)}\nargs = ["mcp"]\ndefault_tools_approval_mode = "approve"`,
        note: 'default_tools_approval_mode = "approve" lets Codex call the tools that change a document without asking each time.',
      };
    case "gemini":
      return {
        text: json({
          mcpServers: {
            chopin: http
              ? { httpUrl: url, headers: { Authorization: "Bearer $CHOPIN_TOKEN" }, trust: true }
              : { ...stdio, trust: true },
          },
        }),
        note: '"trust": true lets Gemini CLI call Chopin\'s tools without asking.',
      };
    case "cursor":
      return {
        text: json({
          mcpServers: { chopin: http ? { url, headers: { Authorization: "Bearer ${env:CHOPIN_TOKEN}" } } : stdio },
        }),
      };
    case "vscode":
      return http
        ? {
            text: json({
              inputs: [
                {
                  type: "promptString",
                  id: "chopin-token",
                  description: "Chopin's agent token (chopin token)",
                  password: true,
                },
              ],
              servers: {
                chopin: { type: "http", url, headers: { Authorization: "Bearer ${input:chopin-token}" } },
              },
            }),
            note: "VS Code asks for the token once and keeps it in its secret storage, so the project file holds none.",
          }
        : { text: json({ servers: { chopin: { type: "stdio", ...stdio } } }) };
    case "claude-desktop":
      return {
        text: json({ mcpServers: { chopin: stdio } }),
        note: http
          ? "Claude Desktop launches commands only, so it connects through chopin mcp, which needs no token."
          : undefined,
      };
    case "inspector":
      return {
        text: http
          ? `npx @modelcontextprotocol/inspector@1.0.3 --cli ${url} --transport http \\\n  --header "Authorization: Bearer $CHOPIN_TOKEN" --method tools/list`
          : `npx @modelcontextprotocol/inspector@1.0.3 --cli ${shellWord(bin)} mcp \\\n  --method tools/call --tool-name read_document --tool-arg id=/documents/acme/rocket/launch-plan`,
      };
  }
  return { text: "" };
}
