// Package acp is what `chopin planner --acp` runs: an agent client of the
// chopin.agent.v1 connection whose model loop is an agent that speaks the
// Agent Client Protocol (ACP: JSON-RPC over the agent process's stdio), such
// as Claude Code, Codex or Gemini CLI through their ACP adapters.
//
// One agent process serves one attached document. The bridge opens the ACP
// session when the document's first turn arrives, offers Chopin's host tools
// to the agent as an MCP server (over HTTP on loopback, or over stdio
// through the chopin binary's hidden acp-mcp subcommand), turns the agent's
// session updates into stream parts, its permission requests for its own
// tools into Decisions kept out of the plan, and its file reads into reads
// confined to the session's working directory with credentials masked. A background job's isolated
// session gets an ACP session of its own, without MCP servers, so its
// prompts never reach the document's session. docs/acp.md has the mapping.
//
// It is a client, like package planner: it must not import app, store,
// room, plannerhost, agentconn's server package or the other wave 2
// packages; the import-graph test holds it to agentconn/client,
// agentconn/wire, checkout (whose confinement its file reads use) and
// redact. It grants no write or terminal access to the agent, and grants
// no permission for the agent's own tools itself: a person does (in an
// isolated session, which has no Decisions, such a request is answered
// cancelled). It allows only calls of Chopin's own host tools, which its
// MCP server offers.
package acp
