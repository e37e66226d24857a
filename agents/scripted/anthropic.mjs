// The Anthropic Messages API as Claude Code uses it (ANTHROPIC_BASE_URL):
// POST /v1/messages streamed as server-sent events, POST
// /v1/messages/count_tokens, and GET /v1/models. Claude Code offers MCP
// tools deferred: the model calls ToolSearch with "select:<names>" first,
// and the next request offers the loaded tools.

import { decide } from "./brain.mjs";

export const MODEL = "claude-sonnet-4-5";

export function routes(log) {
  return {
    "POST /v1/messages": (req, body, res) => messages(log, body, res),
    "POST /v1/messages/count_tokens": (req, body, res) =>
      json(res, { input_tokens: Math.ceil(JSON.stringify(body).length / 4) }),
    "GET /v1/models": (req, body, res) =>
      json(res, {
        data: [{ type: "model", id: MODEL, display_name: "Scripted", created_at: "2025-01-01T00:00:00Z" }],
        has_more: false,
        first_id: MODEL,
        last_id: MODEL,
      }),
  };
}

function json(res, v) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(v));
}

// conversation reads a Messages request as the brain's conversation.
export function conversation(body) {
  const conv = { prompt: "", tools: [], deferred: false, calls: [] };
  for (const t of body.tools || []) {
    if (t.defer_loading) conv.deferred = true;
    else if (t.name) conv.tools.push(t.name);
  }
  const byId = new Map();
  for (const m of body.messages || []) {
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content || [];
    for (const b of blocks) {
      if (m.role === "user" && b.type === "text") {
        conv.prompt += b.text + "\n";
        if (/@chopin\b/i.test(b.text)) conv.turn = conv.calls.length; // a Planner turn's calls start here
      }
      if (m.role === "assistant" && b.type === "tool_use") {
        const call = { name: b.name, args: b.input, result: null, search: b.name === "ToolSearch" };
        byId.set(b.id, call);
        conv.calls.push(call);
      }
      if (m.role === "user" && b.type === "tool_result") {
        const call = byId.get(b.tool_use_id);
        if (!call) continue;
        call.error = !!b.is_error;
        call.result = resultText(b.content);
        // A tool_reference names a tool ToolSearch loaded.
        for (const c of Array.isArray(b.content) ? b.content : []) {
          if (c.type === "tool_reference" && c.tool_name && !conv.tools.includes(c.tool_name)) conv.tools.push(c.tool_name);
        }
      }
    }
  }
  // Tools ToolSearch loaded are sent with defer_loading; once a search
  // named them they are callable.
  if (conv.calls.some((c) => c.search && c.result !== null)) {
    for (const t of body.tools || []) if (t.defer_loading && !conv.tools.includes(t.name)) conv.tools.push(t.name);
  }
  return conv;
}

function resultText(content) {
  if (typeof content === "string") return content;
  return (content || [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

function messages(log, body, res) {
  const conv = conversation(body);
  const d = decide(conv);
  log({ api: "anthropic", model: body.model, ...d.seen, calls: conv.calls, decision: d.search || d.call || d.text });
  if (d.wait) return; // left unanswered until the agent gives up the request
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  ev("message_start", {
    message: { id: `msg_${conv.calls.length + 1}`, type: "message", role: "assistant", model: body.model || MODEL,
      content: [], stop_reason: null, stop_sequence: null, usage },
  });
  let stop = "end_turn";
  if (d.text !== undefined) {
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: d.text } });
  } else {
    const call = d.call || { name: "ToolSearch", args: { query: "select:" + selectNames(body, d.search).join(",") } };
    ev("content_block_start", {
      index: 0,
      content_block: { type: "tool_use", id: `toolu_${conv.calls.length + 1}`, name: call.name, input: {} },
    });
    ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(call.args) } });
    stop = "tool_use";
  }
  ev("content_block_stop", { index: 0 });
  ev("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } });
  ev("message_stop", {});
  res.end();
}

// selectNames are the deferred tools' full names, as the system prompt
// lists them ("mcp__chopin__read_document").
function selectNames(body, suffixes) {
  const system = JSON.stringify(body);
  return suffixes.map((s) => {
    const m = new RegExp(`mcp__[A-Za-z0-9_-]+?__${s}`).exec(system);
    return m ? m[0] : `mcp__chopin__${s}`;
  });
}
