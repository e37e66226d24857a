// The scripted model's one task, the same for every agent: read a Chopin
// document through its MCP tools and add a section to its plan, built from
// the plan text the tool result showed. Each wire format (anthropic.mjs,
// openai.mjs, gemini.mjs) turns a request into a conversation and the
// decision back into that API's answer, so the script holds no state: every
// step is decided from the conversation the agent sends.

import { decidePlanner, isPlannerTurn } from "./planner.mjs";

// The section the script adds; a test finds it in the plan afterwards.
export const SECTION = "## Risks\n\nThe fuel may freeze.\n";

// The task names its document as "document <id>"; agents put other UUIDs
// (session ids) in the prompt too.
const DOC = /document ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g;

// decide takes a conversation
//
//   { prompt: the user's text,
//     tools: the names of the tools the agent offers the model now,
//     deferred: true when the agent hides tools behind a search tool,
//     calls: [{ name, args, result (the text the agent passed back), error? }] }
//
// and returns one of
//
//   { search: ["read_document", "update_document"] }  load deferred tools
//   { call: { name, args } }                          call a tool
//   { text }                                          answer and end the turn
//
// and what it saw, for the log: { doc, step, sawPlan, revision }.
export function decide(conv) {
  // A turn of Chopin's Planner (chopin planner --acp) is the Planner task.
  if (isPlannerTurn(conv)) return decidePlanner(conv);
  const doc = [...conv.prompt.matchAll(DOC)].map((m) => m[1]).pop();
  const seen = { doc, step: "", sawPlan: false, revision: null };
  const done = (step, d) => ({ ...d, seen: { ...seen, step } });
  if (!doc) {
    return done("no-document", { text: "Name a document by its id and I will read it." });
  }
  const tool = (suffix) => conv.tools.find((n) => n === suffix || n.endsWith("_" + suffix));
  const read = tool("read_document");
  const update = tool("update_document");
  const searched = conv.calls.some((c) => c.search);
  if ((!read || !update) && conv.deferred && !searched) {
    return done("search", { search: ["read_document", "update_document"] });
  }
  if (!read || !update) {
    return done("no-tools", {
      text: `The agent offered no read_document and update_document tools (it offered: ${conv.tools.join(", ")}).`,
    });
  }
  const reads = conv.calls.filter((c) => c.name === read);
  const updates = conv.calls.filter((c) => c.name === update);
  if (updates.length > 0) {
    const last = updates[updates.length - 1];
    const revision = /"revision"\s*:\s*(\d+)/.exec(last.result || "");
    if (last.error || !revision) {
      return done("update-failed", { text: `The update was refused: ${last.result}` });
    }
    return done("finished", { text: `I added a Risks section; the plan is at revision ${revision[1]}.` });
  }
  if (reads.length === 0) {
    return done("read", { call: { name: read, args: { id: doc } } });
  }
  const page = pageOf(reads[reads.length - 1].result || "");
  seen.sawPlan = page.source !== null;
  seen.revision = page.revision;
  if (page.source === null || page.revision === null) {
    return done("blind", {
      text: `The read_document result held no plan text, so there is nothing to improve. It was: ${reads[reads.length - 1].result}`,
    });
  }
  const plan = page.source.replace(/\n*$/, "\n\n") + SECTION;
  return done("update", {
    call: { name: update, args: { id: doc, revision: page.revision, plan, idempotencyKey: `scripted-${doc}-${page.revision}` } },
  });
}

// pageOf finds the plan in what read_document's result showed the model:
// the page text (a header, revision: N, ..., then text: and the plan's own
// lines), either as it is or inside JSON (structuredContent's text field,
// or a JSON string).
export function pageOf(result) {
  // Gemini CLI wraps a tool's output in <untrusted_context> tags.
  let text = result.replace(/^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>\s*$/, "$1");
  // Codex puts "Wall time: ...\nOutput:\n" before it.
  const brace = text.indexOf("{");
  if (brace > 0 && !text.includes("\ntext:\n")) text = text.slice(brace);
  for (let i = 0; i < 3; i++) {
    let v;
    try {
      v = JSON.parse(text);
    } catch {
      break;
    }
    if (typeof v === "string") text = v;
    else if (v && typeof v.text === "string") text = v.text;
    else break;
  }
  const revision = /^revision: (\d+)$/m.exec(text);
  let at = text.startsWith("text:\n") ? 0 : text.indexOf("\ntext:\n");
  if (at > 0) at += 1;
  return {
    revision: revision ? Number(revision[1]) : null,
    source: at >= 0 ? text.slice(at + "text:\n".length) : null,
  };
}
