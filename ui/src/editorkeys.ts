// The plan editor's keyboard: Tab leaves the editor, as everywhere else on
// the page (CodeMirror's accessible default), unless the person has turned
// "Tab indents" on, a setting kept in this browser, or the cursor is in a
// Markdown list item, where Tab indents the item and Shift+Tab outdents it
// (the hint over the editor says so). Escape always leaves the editor:
// focus moves to the editor's frame, so the next Tab or Shift+Tab goes on
// through the page and Enter comes back.

import { Compartment, Prec, type EditorState, type Extension } from "@codemirror/state";
import { EditorView, ViewPlugin, keymap } from "@codemirror/view";
import { indentLess, indentMore, indentWithTab } from "@codemirror/commands";
import { ensureSyntaxTree, syntaxTree } from "@codemirror/language";

const storageKey = "chopin:tab-indents";
const listeners = new Set<(on: boolean) => void>();

// tabIndents is this browser's choice: whether Tab indents in the editor.
export function tabIndents(): boolean {
  try {
    return localStorage.getItem(storageKey) === "on";
  } catch {
    return false;
  }
}

export function setTabIndents(on: boolean) {
  try {
    if (on) localStorage.setItem(storageKey, "on");
    else localStorage.removeItem(storageKey);
  } catch {
    // Storage refused: the choice holds for this page only.
  }
  listeners.forEach((l) => l(on));
}

export function onTabIndents(l: (on: boolean) => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

// leaveEditor moves focus from the editor to its frame (the element the
// editor is mounted in), which takes focus for this; Tab and Shift+Tab then
// move on through the page.
export function leaveEditor(view: EditorView): boolean {
  const frame = view.dom.parentElement;
  if (!frame) return false;
  if (!frame.hasAttribute("tabindex")) frame.tabIndex = -1;
  // The editor sits inside its frame: out of the tab order while the frame
  // has the focus, so Tab goes past it, not back into it.
  const content = view.contentDOM;
  const was = content.getAttribute("tabindex");
  content.tabIndex = -1;
  frame.focus();
  frame.addEventListener(
    "blur",
    () => (was === null ? content.removeAttribute("tabindex") : content.setAttribute("tabindex", was)),
    { once: true },
  );
  return true;
}

// inListItem says whether every line the selection touches is in a
// Markdown list item (at any depth, in a quote too).
export function inListItem(state: EditorState): boolean {
  // Parsed up to the selection's end (the tree may stop short of it, say
  // just after a jump to the end of a long plan); kept for the next call.
  const tree =
    ensureSyntaxTree(state, state.selection.ranges[state.selection.ranges.length - 1].to, 100) ?? syntaxTree(state);
  for (const r of state.selection.ranges) {
    const last = state.doc.lineAt(r.to).number;
    for (let n = state.doc.lineAt(r.from).number; n <= last; n++) {
      const line = state.doc.line(n);
      // The line's end: past a quote's mark and a list's, in the item's text.
      let node: ReturnType<typeof tree.resolveInner> | null = tree.resolveInner(line.to, -1);
      while (node && node.name !== "ListItem") node = node.parent;
      if (!node) return false;
    }
  }
  return true;
}

// listTab indents the list items the selection is in; listShiftTab outdents
// them, when one of them is indented. Anywhere else they do nothing, so Tab
// and Shift+Tab move the focus on.
const listTab = (v: EditorView) => inListItem(v.state) && indentMore(v);
const listShiftTab = (v: EditorView) => {
  const { state } = v;
  if (!inListItem(state)) return false;
  const indented = state.selection.ranges.some((r) => {
    for (let pos = r.from; pos <= r.to;) {
      const line = state.doc.lineAt(pos);
      if (/^[ \t]/.test(line.text)) return true;
      pos = line.to + 1;
    }
    return false;
  });
  return indented && indentLess(v);
};

// editorKeys is the keymap part of the editor's extensions; it follows
// setTabIndents in every editor that has it, for as long as it lives.
export function editorKeys(): Extension {
  const tab = new Compartment();
  const tabExt = (on: boolean): Extension => (on ? keymap.of([indentWithTab]) : []);
  return [
    tab.of(tabExt(tabIndents())),
    keymap.of([{ key: "Tab", run: listTab, shift: listShiftTab }]),
    // Esc first undoes a multiple selection (CodeMirror's own Esc), then leaves.
    Prec.high(keymap.of([{ key: "Escape", run: (v) => v.state.selection.ranges.length === 1 && leaveEditor(v) }])),
    // In the tab order even when read-only, so an archived plan can be
    // reached and scrolled by keyboard.
    EditorView.contentAttributes.of({ "aria-describedby": "editor-keys-hint", tabindex: "0" }),
    // The editor follows a change of the setting, made here or in another
    // pane of this page.
    viewFollower((view) => onTabIndents((on) => view.dispatch({ effects: tab.reconfigure(tabExt(on)) }))),
  ];
}

// viewFollower runs subscribe once the view exists and undoes it when the
// view is destroyed.
function viewFollower(subscribe: (view: EditorView) => () => void): Extension {
  return ViewPlugin.define((view) => {
    const off = subscribe(view);
    return { destroy: off };
  });
}
