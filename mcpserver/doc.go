// Package mcpserver is the local agent MCP server: the document tools that
// coding agents (Claude Code, Codex, Gemini CLI, Cursor, VS Code, Zed and
// others) call at /mcp over Streamable HTTP, on the official Go SDK, and
// the tool set `chopin mcp` forwards stdio to. Every tool reaches a
// document the way a person would: it reads and edits the plan through the
// room's journal and posts into Chat under the MCP client's name. It states
// what it needs of the catalog, the plan, Chat and images as small
// interfaces that app implements.
//
// It must not authenticate (app checks the agent token, Origin and Host
// before a request reaches it), act as the Planner, delete a document, or
// reach storage other than through those interfaces.
package mcpserver
