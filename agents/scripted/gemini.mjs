// Gemini's API as Gemini CLI uses it (GOOGLE_GEMINI_BASE_URL with an API
// key): POST /v1beta/models/MODEL:streamGenerateContent?alt=sse for the
// turn, :generateContent for the CLI's own JSON side calls (its model
// router's complexity score, and others), each answered with the smallest
// JSON its responseJsonSchema takes, and :countTokens. Gemini CLI offers
// MCP tools directly, named mcp_<server>_<tool>, and only those of a server
// it trusts ("trust": true) in a run without a person to approve them.

import { decide } from "./brain.mjs";

export const MODEL = "gemini-2.5-flash";

export function routes(log) {
  return {
    "POST /v1beta/models/*": (req, body, res, path) => {
      const method = path.slice(path.lastIndexOf(":") + 1);
      if (method === "streamGenerateContent") return stream(log, body, res, path);
      if (method === "generateContent") return generate(log, body, res, path);
      if (method === "countTokens") return json(res, { totalTokens: Math.ceil(JSON.stringify(body).length / 4) });
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: 404, message: `No ${method} here.`, status: "NOT_FOUND" } }));
    },
  };
}

function json(res, v) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(v));
}

// conversation reads a generateContent request as the brain's conversation.
export function conversation(body) {
  const conv = { prompt: "", tools: [], deferred: false, calls: [] };
  for (const t of body.tools || []) for (const f of t.functionDeclarations || []) conv.tools.push(f.name);
  const pending = [];
  for (const c of body.contents || []) {
    for (const p of c.parts || []) {
      if (c.role === "user" && typeof p.text === "string") {
        conv.prompt += p.text + "\n";
        if (/@chopin\b/i.test(p.text)) conv.turn = conv.calls.length; // a Planner turn's calls start here
      }
      if (p.functionCall) {
        const call = { name: p.functionCall.name, args: p.functionCall.args || {}, result: null };
        conv.calls.push(call);
        pending.push(call);
      }
      if (p.functionResponse) {
        const call = pending.find((k) => k.result === null && k.name === p.functionResponse.name);
        if (!call) continue;
        const r = p.functionResponse.response || {};
        call.error = "error" in r;
        call.result = typeof r.output === "string" ? r.output : typeof r.error === "string" ? r.error : JSON.stringify(r);
      }
    }
  }
  return conv;
}

const usage = { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 };

function stream(log, body, res, path) {
  const conv = conversation(body);
  const d = decide(conv);
  const model = path.slice(path.lastIndexOf("/") + 1, path.lastIndexOf(":"));
  log({ api: "gemini", model, ...d.seen, calls: conv.calls, decision: d.search || d.call || d.text });
  if (d.wait) return; // left unanswered until the agent gives up the request
  const part = d.text !== undefined ? { text: d.text } : { functionCall: { name: d.call.name, args: d.call.args } };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = { candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: usage, modelVersion: model };
  res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  res.end();
}

// generate answers the CLI's side calls with the smallest JSON that fits
// the schema they ask for.
function generate(log, body, res, path) {
  const schema = body.generationConfig && (body.generationConfig.responseJsonSchema || body.generationConfig.responseSchema);
  const text = schema ? JSON.stringify(smallest(schema)) : "OK";
  log({ api: "gemini-side", path, answer: text });
  json(res, { candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }], usageMetadata: usage });
}

function smallest(s) {
  const type = String(s.type || (s.properties ? "object" : "string")).toLowerCase();
  if (s.enum) return s.enum[0];
  switch (type) {
    case "object": {
      const o = {};
      for (const k of s.required || Object.keys(s.properties || {})) o[k] = smallest((s.properties || {})[k] || {});
      return o;
    }
    case "array":
      return [];
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return false;
    default:
      return "scripted";
  }
}
