// The set-up of each MCP client for Chopin's local agent MCP tools, as the
// Connect dialog shows it: over HTTP at /mcp with the agent token, or
// through `chopin mcp`, which the client launches. docs/mcp.md shows the
// same snippets.

export type McpTransport = "http" | "stdio";

export interface McpClient {
  id: string;
  name: string;
  where: string; // where the snippet goes
}

export const mcpClients: McpClient[] = [
  { id: "claude-code", name: "Claude Code", where: "Run in a terminal:" },
  { id: "codex", name: "Codex", where: "Add to ~/.codex/config.toml:" },
  { id: "gemini", name: "Gemini CLI", where: "Add to ~/.gemini/settings.json:" },
  { id: "cursor", name: "Cursor", where: "Add to ~/.cursor/mcp.json:" },
  { id: "vscode", name: "VS Code", where: "Add to .vscode/mcp.json in your project:" },
  {
    id: "claude-desktop",
    name: "Claude Desktop",
    where: "Add to claude_desktop_config.json (Settings → Developer → Edit Config):",
  },
];

// TOKEN stands for the agent token until the person chooses to show it.
export const TOKEN = "<agent token>";

const json = (v: unknown) => JSON.stringify(v, null, 2);

// mcpSnippet is what to paste for client to reach url (Chopin's /mcp)
// with token over transport, and a note when the client needs one.
export function mcpSnippet(
  client: string,
  transport: McpTransport,
  url: string,
  token: string,
): { text: string; note?: string } {
  const bearer = `Bearer ${token}`;
  const stdio = { command: "chopin", args: ["mcp"] };
  switch (client) {
    case "claude-code":
      return transport === "http"
        ? { text: `claude mcp add --transport http chopin ${url} --header "Authorization: ${bearer}"` }
        : { text: "claude mcp add chopin -- chopin mcp" };
    case "codex":
      return transport === "http"
        ? {
            text: `[mcp_servers.chopin]\nurl = "${url}"\nbearer_token_env_var = "CHOPIN_TOKEN"`,
            note: `Codex reads the token from the environment: export CHOPIN_TOKEN="${token}" before starting it.`,
          }
        : { text: `[mcp_servers.chopin]\ncommand = "chopin"\nargs = ["mcp"]` };
    case "gemini":
      return {
        text: json({
          mcpServers: { chopin: transport === "http" ? { httpUrl: url, headers: { Authorization: bearer } } : stdio },
        }),
      };
    case "cursor":
      return {
        text: json({
          mcpServers: { chopin: transport === "http" ? { url, headers: { Authorization: bearer } } : stdio },
        }),
      };
    case "vscode":
      return {
        text: json({
          servers: {
            chopin:
              transport === "http"
                ? { type: "http", url, headers: { Authorization: bearer } }
                : { type: "stdio", ...stdio },
          },
        }),
      };
    case "claude-desktop":
      return transport === "http"
        ? {
            text: json({
              mcpServers: {
                chopin: {
                  command: "npx",
                  args: ["mcp-remote", url, "--header", "Authorization:${CHOPIN_AUTH}"],
                  env: { CHOPIN_AUTH: bearer },
                },
              },
            }),
            note: "Claude Desktop launches commands only: over HTTP it needs the mcp-remote bridge from npm. chopin mcp is the same bridge, built in, and needs no token.",
          }
        : { text: json({ mcpServers: { chopin: stdio } }) };
  }
  return { text: "" };
}
