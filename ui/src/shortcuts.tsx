// The keyboard shortcuts: the list that `?` opens on every page (outside a
// text field), and the workspace's own shortcuts for its destinations.
// Every shortcut the UI has is listed here, so the list stays whole.

import { useEffect, useRef, useState } from "preact/hooks";
import "./keyboard.css";

export const isMac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);
const mod = isMac ? "⌘" : "Ctrl";
const alt = isMac ? "⌥" : "Alt";

export const shortcutGroups: { title: string; keys: [string[], string][] }[] = [
  {
    title: "Everywhere",
    keys: [
      [["?"], "Show this list of shortcuts"],
      [[mod, "K"], "Quick switcher: go to a document or repository"],
      [["Esc"], "Close a dialog or list"],
    ],
  },
  {
    title: "In a document",
    keys: [
      [[alt, "1"], "Show the Plan and put the cursor in the editor"],
      [[alt, "2"], "Show the Decisions"],
      [[alt, "3"], "Go to the Chat message box"],
      [[alt, "4"], "Open the plan's history (Esc closes it)"],
      [[mod, "Enter"], "Send the message (in the message box)"],
      [[mod, "."], "Stop the Planner while it works"],
    ],
  },
  {
    title: "Chat message box",
    keys: [
      [["Enter"], "Send"],
      [["Shift", "Enter"], "New line"],
      [["/"], "The Planner's commands (↑ ↓ to choose, Enter or Tab to take one)"],
    ],
  },
  {
    title: "History",
    keys: [
      [["↑"], "The newer session"],
      [["↓"], "The older session"],
      [["Enter"], "See the plan as it was after the session"],
      [["Esc"], "Take back a question, then close the History"],
    ],
  },
  {
    title: "Plan editor",
    keys: [
      [["Esc"], "Leave the editor (then Tab or Shift+Tab moves on, Enter comes back)"],
      [["Tab"], "Move to the next control; in a list item, or when “Tab indents” is on, indent"],
      [["Shift", "Tab"], "Move to the previous control; in an indented list item, outdent"],
      [[mod, alt, "M"], "Comment on the selected text (in Preview too)"],
      [[mod, "Z"], "Undo"],
      [isMac ? [mod, "Shift", "Z"] : [mod, "Y"], "Redo"],
    ],
  },
];

// inTextField reports whether typing at target writes text, where a
// printable key must not be taken as a shortcut.
export function inTextField(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.closest) return false;
  if (el.closest("[contenteditable=''], [contenteditable='true'], textarea, select")) return true;
  const input = el.closest("input");
  return !!input && !["checkbox", "radio", "button", "submit", "reset", "file", "range", "color"].includes(input.type);
}

// Shortcuts opens the list on `?`; it is mounted once, above every page.
export function Shortcuts() {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "?" || e.ctrlKey || e.metaKey || e.altKey || e.isComposing || inTextField(e.target)) return;
      if (document.querySelector("dialog[open]") && !open) return; // another dialog has the keyboard
      e.preventDefault();
      setOpen(true);
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [open]);
  return open ? <ShortcutsDialog onClose={() => setOpen(false)} /> : null;
}

function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const title = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.showModal();
    // showModal focuses the first control, Close at the bottom, which
    // scrolls a tall list past its title: the list opens at its top.
    title.current?.focus({ preventScroll: true });
    if (ref.current) ref.current.scrollTop = 0;
  }, []);
  return (
    <dialog ref={ref} class="shortcuts-dialog" onClose={onClose} aria-labelledby="shortcuts-title">
      <h2 id="shortcuts-title" ref={title} tabIndex={-1}>
        Keyboard shortcuts
      </h2>
      {shortcutGroups.map((g) => (
        <section key={g.title} aria-label={g.title}>
          <h3>{g.title}</h3>
          <dl>
            {g.keys.map(([keys, what]) => (
              <div class="shortcut" key={what}>
                <dt>
                  {keys.map((k, i) => (
                    <>
                      {i > 0 && <span class="plus">+</span>}
                      <kbd>{k}</kbd>
                    </>
                  ))}
                </dt>
                <dd>{what}</dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
      <div class="actions">
        <button class="primary" onClick={() => ref.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}

// useWorkspaceShortcuts binds Alt+1, Alt+2 and Alt+3 (Option on a Mac) to
// the workspace's Plan, Decisions and Chat, wherever the focus is.
export function useWorkspaceShortcuts(go: (where: "plan" | "decisions" | "chat") => void) {
  const latest = useRef(go);
  latest.current = go;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.isComposing) return;
      const where = ({ Digit1: "plan", Digit2: "decisions", Digit3: "chat" } as const)[e.code as "Digit1"];
      if (!where || document.querySelector("dialog[open]")) return;
      e.preventDefault();
      latest.current(where);
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);
}

// isStopKey is Ctrl+. (⌘. on a Mac): stop the Planner.
export const isStopKey = (e: KeyboardEvent) =>
  e.key === "." && (isMac ? e.metaKey : e.ctrlKey) && !e.altKey && !e.shiftKey;

// isSendKey is Ctrl+Enter (⌘Enter on a Mac): send the message.
export const isSendKey = (e: KeyboardEvent) => e.key === "Enter" && (e.ctrlKey || e.metaKey) && !e.altKey;
