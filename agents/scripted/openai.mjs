// The OpenAI Responses API as Codex uses it (a model_providers entry with
// wire_api = "responses"): POST /v1/responses streamed as server-sent
// events, and GET /v1/models. For a model it knows (MODEL), Codex offers MCP
// tools deferred behind a client-executed tool_search tool: the model
// answers a tool_search_call, Codex sends back a tool_search_output with the
// matching tools (in a namespace, "mcp__chopin"), and the model then calls
// one as a function_call with that namespace.

import { decide } from "./brain.mjs";

// A model Codex has metadata for; with an unknown one it warns and offers
// MCP tools directly instead of through tool_search.
export const MODEL = "gpt-5.5";

export function routes(log) {
  return {
    "POST /v1/responses": (req, body, res) => responses(log, body, res),
    "GET /v1/models": (req, body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: MODEL, object: "model", created: 0, owned_by: "scripted" }] }));
    },
  };
}

// conversation reads a Responses request as the brain's conversation;
// names maps a namespaced tool's full name to {namespace, name}.
export function conversation(body) {
  const conv = { prompt: "", tools: [], deferred: false, calls: [] };
  const names = new Map();
  const offer = (t, namespace) => {
    if (t.type === "namespace") {
      for (const inner of t.tools || []) offer(inner, t.name);
    } else if (t.type === "function" && t.name) {
      const full = namespace ? `${namespace}__${t.name}` : t.name;
      names.set(full, { namespace, name: t.name });
      if (!conv.tools.includes(full)) conv.tools.push(full);
    } else if (t.type === "tool_search") {
      conv.deferred = true;
    }
  };
  for (const t of body.tools || []) offer(t);
  const byId = new Map();
  for (const item of body.input || []) {
    switch (item.type) {
      case "message":
        if (item.role === "user") {
          for (const c of item.content || []) {
            if (c.type !== "input_text") continue;
            conv.prompt += c.text + "\n";
            if (/@chopin\b/i.test(c.text)) conv.turn = conv.calls.length; // a Planner turn's calls start here
          }
        }
        break;
      case "tool_search_call": {
        const call = { name: "tool_search", args: item.arguments, result: null, search: true };
        byId.set(item.call_id, call);
        conv.calls.push(call);
        break;
      }
      case "tool_search_output": {
        const call = byId.get(item.call_id);
        if (call) call.result = JSON.stringify(item.tools || []);
        for (const t of item.tools || []) offer(t);
        break;
      }
      case "function_call": {
        let args = {};
        try {
          args = JSON.parse(item.arguments || "{}");
        } catch {}
        const full = item.namespace ? `${item.namespace}__${item.name}` : item.name;
        const call = { name: full, args, result: null };
        byId.set(item.call_id, call);
        conv.calls.push(call);
        break;
      }
      case "function_call_output": {
        const call = byId.get(item.call_id);
        if (!call) break;
        const out = item.output;
        call.result =
          typeof out === "string"
            ? out
            : Array.isArray(out)
              ? out.filter((c) => typeof c.text === "string").map((c) => c.text).join("\n")
              : JSON.stringify(out);
        break;
      }
    }
  }
  return { conv, names };
}

function responses(log, body, res) {
  const { conv, names } = conversation(body);
  const d = decide(conv);
  log({ api: "openai", model: body.model, ...d.seen, calls: conv.calls, decision: d.search || d.call || d.text });
  if (d.wait) return; // left unanswered until the agent gives up the request
  const n = conv.calls.length + 1;
  let item;
  if (d.text !== undefined) {
    item = { type: "message", id: `msg_${n}`, role: "assistant", status: "completed",
      content: [{ type: "output_text", text: d.text, annotations: [] }] };
  } else if (d.search) {
    item = { type: "tool_search_call", id: `ts_${n}`, call_id: `search_${n}`, status: "completed", execution: "client",
      arguments: { query: d.search.join(" "), limit: 8 } };
  } else {
    const { namespace, name } = names.get(d.call.name) || { name: d.call.name };
    item = { type: "function_call", id: `fc_${n}`, call_id: `call_${n}`, status: "completed", name,
      ...(namespace ? { namespace } : {}), arguments: JSON.stringify(d.call.args) };
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const response = { id: `resp_${n}`, object: "response", model: body.model, status: "in_progress", output: [] };
  ev("response.created", { response });
  ev("response.output_item.added", { output_index: 0, item });
  if (item.type === "message") {
    ev("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: d.text });
  }
  ev("response.output_item.done", { output_index: 0, item });
  ev("response.completed", {
    response: { ...response, status: "completed", output: [item],
      usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 } },
  });
  res.end();
}
