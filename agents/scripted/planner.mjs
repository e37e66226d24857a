// The scripted model's Planner task, for the ACP presets of
// `chopin planner --acp` (app/agents_acp_test.go): the agent gets a Chopin
// turn, whose prompt holds "@chopin" and the person's words, and Chopin's
// host tools (read_plan, edit_plan, ...) through the bridge's MCP server
// beside the agent's own tools. Like brain.mjs it holds no state: each step
// is decided from the conversation the agent sends.
//
//   "@chopin add a risks section"   read_plan, then one of the agent's own
//                                   shell commands (which asks the person's
//                                   permission), then edit_plan at the
//                                   revision read, then a reply
//   "@chopin add a risks section without asking"
//                                   read_plan, edit_plan, reply (no command:
//                                   what the overhead benchmark runs)
//   "@chopin wait"                  no answer until the agent gives up the
//                                   request (Stop, a crash, a SIGTERM)

import { SECTION } from "./brain.mjs";

// The command the script runs with the agent's shell tool: it writes a file
// in the agent's working directory, which every agent asks permission for.
export const COMMAND = "touch risks-checked.txt";

// isPlannerTurn says whether a conversation is a Chopin Planner turn.
export function isPlannerTurn(conv) {
  return /@chopin\b/i.test(conv.prompt);
}

// The agents' shell tools, by the name each offers the model.
const shells = ["Bash", "run_shell_command", "shell_command", "exec_command", "shell"];

// decidePlanner is brain.mjs's decide for a Planner turn; it returns the
// same shapes, plus { wait: true } for a request left unanswered.
export function decidePlanner(conv) {
  const seen = { doc: "planner", step: "", sawPlan: false, revision: null };
  const done = (step, d) => ({ ...d, seen: { ...seen, step } });
  // The person's words are the prompt's last "@chopin ..." line.
  const asks = [...conv.prompt.matchAll(/@chopin\b([^\n]*)/gi)].map((m) => m[1].trim().toLowerCase());
  const ask = asks[asks.length - 1] || "";
  if (ask.startsWith("wait")) return done("wait", { wait: true });
  const tool = (suffix) => conv.tools.find((n) => n === suffix || n.endsWith("_" + suffix));
  const read = tool("read_plan");
  const edit = tool("edit_plan");
  const searched = conv.calls.some((c) => c.search);
  if ((!read || !edit) && conv.deferred && !searched) {
    return done("search", { search: ["read_plan", "edit_plan"] });
  }
  if (!read || !edit) {
    return done("no-tools", { text: `The agent offered no read_plan and edit_plan (it offered: ${conv.tools.join(", ")}).` });
  }
  // Only this turn's calls: an agent sends the session's earlier turns too.
  const calls = conv.calls.slice(conv.turn || 0);
  const reads = calls.filter((c) => c.name === read);
  const edits = calls.filter((c) => c.name === edit);
  if (edits.length > 0) {
    const last = edits[edits.length - 1];
    const text = textOf(last.result || "");
    const revision = /revision[":\s]+(\d+)/.exec(text);
    if (last.error || /nothing was applied/i.test(text) || !revision) {
      return done("edit-failed", { text: `The edit was refused: ${text}` });
    }
    return done("finished", { text: `I added a Risks section; the plan is at revision ${revision[1]}.` });
  }
  if (reads.length === 0) return done("read", { call: { name: read, args: {} } });
  const result = textOf(reads[reads.length - 1].result || "");
  const revision = /^revision: (\d+)$/m.exec(result);
  seen.sawPlan = revision !== null;
  seen.revision = revision ? Number(revision[1]) : null;
  if (!revision) return done("blind", { text: `read_plan showed no revision: ${result}` });
  const shell = shells.find((s) => conv.tools.includes(s));
  const ran = calls.some((c) => shells.includes(c.name));
  if (!ask.includes("without asking") && !ran) {
    if (!shell) return done("no-shell", { text: `The agent offered no shell tool (it offered: ${conv.tools.join(", ")}).` });
    return done("command", { call: { name: shell, args: shellArgs(shell) } });
  }
  const operations = [{ op: "insert_root", content: SECTION.trimEnd() }];
  return done("edit", { call: { name: edit, args: { revision: seen.revision, operations } } });
}

// shellArgs are the arguments of each agent's shell tool for COMMAND.
function shellArgs(shell) {
  switch (shell) {
    case "Bash":
      return { command: COMMAND, description: "Mark the risks as checked" };
    case "run_shell_command":
      return { command: COMMAND, description: "Mark the risks as checked" };
    case "exec_command":
      return { cmd: COMMAND, sandbox_permissions: "require_escalated", justification: "Mark the risks as checked" };
    case "shell_command":
      return { command: COMMAND, sandbox_permissions: "require_escalated", justification: "Mark the risks as checked" };
    default:
      return { command: ["bash", "-lc", COMMAND], sandbox_permissions: "require_escalated", justification: "Mark the risks as checked" };
  }
}

// textOf is a tool result's text as the agent passed it back: Codex puts
// "Wall time: ...\nOutput:\n" before the result's content blocks as JSON,
// Gemini CLI wraps it in <untrusted_context> tags, Claude Code gives it as
// it is.
function textOf(result) {
  let text = result.replace(/^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>\s*$/, "$1");
  const output = text.indexOf("Output:\n");
  if (text.startsWith("Wall time:") && output >= 0) text = text.slice(output + "Output:\n".length);
  try {
    const v = JSON.parse(text);
    if (Array.isArray(v)) return v.filter((c) => typeof c.text === "string").map((c) => c.text).join("\n");
    if (typeof v === "string") return v;
  } catch {}
  return text;
}
