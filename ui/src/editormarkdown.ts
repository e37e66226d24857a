// The Plan editor's Markdown language: CodeMirror's, except while the plan
// nests past the bounds that Chat and the Preview read it to
// (markdownbound.ts), or holds a paragraph of thousands of delimiters, when
// the editor shows it without Markdown's colours. CodeMirror's Markdown
// parser reads such text in time that grows with the square of its nesting,
// or of a paragraph's delimiters, and a paragraph in one step that cannot
// yield: a line of 16,000 "- " took 5 s, 120,000 nested brackets 27 s, and
// 32 KB of "*_" 6 s, while the tab was frozen (docs/room-protocol.md, "How
// deep Markdown is read").
//
// The language itself, CodeMirror's Markdown with the HTML, CSS and
// JavaScript it reads inside a plan (about 79 KB gzip), is loaded when the
// first editor opens, not with the page: until it arrives, a moment later,
// the editor shows the plan without colours too.

import { Compartment, EditorState, type Extension, type Text } from "@codemirror/state";
import { ViewPlugin, type EditorView, type ViewUpdate } from "@codemirror/view";
import type { LanguageSupport } from "@codemirror/language";
import { bound } from "./markdownbound";

// maxDelimiterWork bounds the sum over paragraphs of the square of each
// one's delimiters (* _ ` [ ] <), which is how the parser's inline work
// grows: a plan of ordinary paragraphs comes to thousands; one paragraph of
// 2,000 delimiters, about 100 ms of parsing, to 4,000,000.
const maxDelimiterWork = 4_000_000;

// delimiterWork is that sum for text, fenced code left out.
export function delimiterWork(text: string): number {
  let work = 0;
  let inPara = 0; // delimiters in the paragraph so far
  let fence = "";
  for (let start = 0; start < text.length;) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const opens = /^[ >]*(`{3,}|~{3,})/.exec(text.slice(start, Math.min(end, start + 64)));
    if (fence) {
      if (opens && opens[1][0] === fence[0] && opens[1].length >= fence.length) fence = "";
    } else if (opens) {
      fence = opens[1];
      work += inPara * inPara;
      inPara = 0;
    } else {
      let blank = true;
      for (let i = start; i < end; i++) {
        const c = text.charCodeAt(i);
        if (c === 42 || c === 95 || c === 96 || c === 91 || c === 93 || c === 60) inPara++;
        if (blank && c !== 32 && c !== 9 && c !== 13) blank = false;
      }
      if (blank) {
        work += inPara * inPara;
        inPara = 0;
      }
    }
    start = end + 1;
  }
  return work + inPara * inPara;
}

// tooMuchForTheParser: the plan nests past the bounds, or its paragraphs
// hold too many delimiters.
const tooMuchForTheParser = (doc: Text | string) => {
  const text = doc.toString();
  return delimiterWork(text) > maxDelimiterWork || bound(text, true).inserted.length > 0;
};

let markdown: LanguageSupport | null = null;
let loading: Promise<LanguageSupport> | null = null;

// loadPlanLanguage loads CodeMirror's Markdown, once.
export const loadPlanLanguage = () =>
  (loading ??= import("@codemirror/lang-markdown").then((m) => (markdown = m.markdown())));

// A change that inserts this much at once (a paste, another tab's edit, a
// reload) is checked before the parser sees it; typing is checked once it
// rests for settleMs.
const checkAtOnce = 512;
const settleMs = 400;

// planLanguage is the language of an editor whose text starts as doc.
export function planLanguage(doc: string): Extension {
  const lang = new Compartment();
  const choose = (doc: Text | string): Extension => (markdown && !tooMuchForTheParser(doc) ? markdown : []);
  return [
    lang.of(choose(doc)),
    EditorState.transactionExtender.of((tr) => {
      if (!tr.docChanged) return null;
      let inserted = 0;
      tr.changes.iterChanges((_a, _b, _c, _d, text) => (inserted += text.length));
      if (inserted < checkAtOnce) return null;
      const next = choose(tr.newDoc);
      return next === lang.get(tr.startState) ? null : { effects: lang.reconfigure(next) };
    }),
    ViewPlugin.fromClass(
      class {
        timer = 0;
        gone = false;
        constructor(readonly view: EditorView) {
          if (!markdown) loadPlanLanguage().then(() => this.check());
        }
        check() {
          if (this.gone) return;
          const next = choose(this.view.state.doc);
          if (next !== lang.get(this.view.state)) this.view.dispatch({ effects: lang.reconfigure(next) });
        }
        update(u: ViewUpdate) {
          if (!u.docChanged) return;
          clearTimeout(this.timer);
          this.timer = window.setTimeout(() => this.check(), settleMs);
        }
        destroy() {
          this.gone = true;
          clearTimeout(this.timer);
        }
      },
    ),
  ];
}
