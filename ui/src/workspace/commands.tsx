// The attached Planner's commands in the composer (capability-catalog: the
// commands of chat:model). Typing "/" at the start of a message opens a list
// of them, filtered as one types; a chosen command shows as a chip before
// the words, and the message goes as chat:send with `command` and only the
// words after it as `text` (docs/room-protocol.md). The server turns a skill
// into "/name args" and a workflow into a request to start it; a refusal
// (unknown-command) is shown in its words. Names, kinds and descriptions are
// shown exactly as the client wrote them, as text.

import type { CatalogCommand, ModelState } from "../protocol";

export type PlannerCommand = CatalogCommand;

export const reportedCommands = (m?: ModelState): PlannerCommand[] =>
  m?.offered && Array.isArray(m.commands)
    ? m.commands.filter((c) => c && typeof c.name === "string" && c.name !== "")
    : [];

// commandMatches are the commands a draft of "/query" asks for: names that
// start with the query first, then names that hold it, each in the order the
// client gave. A draft that is not "/..." on one line asks for none.
export function commandMatches(cmds: PlannerCommand[], draft: string): PlannerCommand[] {
  if (!draft.startsWith("/") || draft.includes("\n")) return [];
  const q = draft.slice(1).toLowerCase();
  const starts = cmds.filter((c) => c.name.toLowerCase().startsWith(q));
  const holds = cmds.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
  return [...starts, ...holds];
}

// commandIn reads a draft typed out as "/name args" for a reported name; the
// longest name that fits wins, as the server reads "@chopin /name args".
export function commandIn(cmds: PlannerCommand[], draft: string): { command: PlannerCommand; args: string } | null {
  if (!draft.startsWith("/")) return null;
  const rest = draft.slice(1);
  let best: { command: PlannerCommand; args: string } | null = null;
  for (const c of cmds) {
    if (!rest.startsWith(c.name) || (best && c.name.length <= best.command.name.length)) continue;
    const after = rest.slice(c.name.length);
    if (after !== "" && !/^\s/.test(after)) continue;
    best = { command: c, args: after.trim() };
  }
  return best;
}

export const commandOptionID = (i: number) => "planner-command-" + i;

// CommandList is the listbox under the composer's "/"; the textarea keeps
// the focus and points at the active option (aria-activedescendant).
export function CommandList({
  items,
  active,
  onChoose,
}: {
  items: PlannerCommand[];
  active: number;
  onChoose: (c: PlannerCommand) => void;
}) {
  return (
    <ul class="command-list" id="planner-commands" role="listbox" aria-label="Planner commands">
      {items.map((c, i) => (
        <li
          key={i}
          id={commandOptionID(i)}
          role="option"
          aria-selected={i === active}
          class={"command-option" + (i === active ? " active" : "")}
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => onChoose(c)}
        >
          <span class="command-name mono">/{c.name}</span>
          {c.kind && <span class="badge command-kind">{c.kind}</span>}
          {c.description && <span class="command-desc muted small">{c.description}</span>}
        </li>
      ))}
    </ul>
  );
}

// CommandChip is the chosen command, before the message's words.
export function CommandChip({
  command,
  onRemove,
  disabled,
}: {
  command: PlannerCommand;
  onRemove: () => void;
  disabled: boolean;
}) {
  return (
    <div class="command-chip" role="group" aria-label="Command">
      <span class="command-name mono">/{command.name}</span>
      {command.kind && <span class="badge command-kind">{command.kind}</span>}
      <button
        type="button"
        class="link small dismiss"
        aria-label="Remove the command"
        disabled={disabled}
        onClick={onRemove}
      >
        ×
      </button>
    </div>
  );
}
