// Markdown for the Plan, Chat and Decision cards: marked with raw HTML
// escaped (never rendered), then DOMPurify. The Plan's MDX components
// (<Callout>, <Tabs>/<Tab>, the server's <Decision id="..." />) are parsed by
// marked extensions into our own markup; nothing else that looks like a tag
// is ever a tag. Mermaid fences become placeholders that mermaid.ts draws.
//
// Markdown here is untrusted (a message, a plan, the Planner's output), so
// its nesting is bounded before marked reads it (markdownbound.ts), each
// message, card and Preview block is converted on its own, and one whose
// conversion still throws shows as plain text with a note (withFallback):
// whatever one holds, the others show.

import {
  Marked,
  type Token,
  type Tokens,
  type TokensList,
  type TokenizerExtension,
  type RendererExtension,
} from "marked";
import DOMPurify from "dompurify";
import { bound, maxDepth, sourceOffset } from "./markdownbound";

export { maxDepth };

const escapeMap: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHTML = (s: string) => s.replace(/[&<>"']/g, (c) => escapeMap[c]);

const calloutTypes = new Set(["note", "tip", "important", "warning", "danger"]);

// The tokens of the MDX components, as their tokenizers below make them.
interface DecisionToken extends Tokens.Generic {
  type: "decision";
  id: string;
}
interface CalloutToken extends Tokens.Generic {
  type: "callout";
  kind: string;
  tokens: Token[];
}
interface TabsToken extends Tokens.Generic {
  type: "tabs";
  panes: { title: string; tokens: Token[] }[];
}

// scanBudget is how many more characters findClose may read while a plan
// is converted: each component searches the rest of the plan for its end,
// and one left open searches to the end. A plan's conversion may read a
// few times its length; past that, a component shows as text.
let scanBudget = Infinity;
const planScanBudget = (source: string) => 8 * source.length + 65536;

// findClose finds the closing tag of a component that may nest.
function findClose(src: string, open: RegExp, close: string, from: number): number {
  if (scanBudget <= 0) return -1;
  let depth = 1;
  const re = new RegExp(`${open.source}|${close.replace(/[/]/g, "\\/")}`, "g");
  re.lastIndex = from;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    if (m[0].startsWith(close)) {
      if (--depth === 0) {
        scanBudget -= m.index - from;
        return m.index;
      }
    } else depth++;
  }
  scanBudget -= src.length - from;
  return -1;
}

// startIn is a component's start function: where in the paragraph that
// src starts with a line opens the component (tag: "<Callout", say), so
// the paragraph ends there. marked passes the paragraph without its first
// character, so only a tag after a line break starts a line. It reads that
// paragraph only, not the rest of the plan, once a paragraph; marked asks
// for each line of a list item too, and uses the answer only for a
// paragraph outside lists, so there it reads nothing.
const startIn = (tag: string) =>
  function (this: { lexer: { state: { top: boolean } } }, src: string) {
    if (!this.lexer.state.top) return undefined;
    const blank = src.search(/\n[ \t]*\n/);
    const at = (blank < 0 ? src : src.slice(0, blank)).indexOf("\n" + tag);
    return at < 0 ? undefined : at + 1;
  };

const decision: TokenizerExtension & RendererExtension = {
  name: "decision",
  level: "block",
  start: startIn("<Decision "),
  tokenizer(src) {
    const m = /^<Decision id="([^"]*)" \/>[ \t]*(?:\n|$)/.exec(src);
    if (m) return { type: "decision", raw: m[0], id: m[1] };
  },
  renderer: (t) => `<div class="decision-slot" data-decision="${escapeHTML((t as DecisionToken).id)}"></div>`,
};

// An accepted comment's record, a line only the server writes; the Plan
// view fills the slot from the thread (workspace/comments.tsx).
const commentRecord: TokenizerExtension & RendererExtension = {
  name: "commentRecord",
  level: "block",
  start: startIn("<Comment "),
  tokenizer(src) {
    const m = /^<Comment id="([^"]*)" \/>[ \t]*(?:\n|$)/.exec(src);
    if (m) return { type: "commentRecord", raw: m[0], id: m[1] };
  },
  renderer: (t) => `<div class="comment-record-slot" data-comment="${escapeHTML((t as DecisionToken).id)}"></div>`,
};

const callout: TokenizerExtension & RendererExtension = {
  name: "callout",
  level: "block",
  start: startIn("<Callout"),
  tokenizer(src) {
    const m = /^<Callout(?:\s+type="([a-z]+)")?\s*>[ \t]*\n?/.exec(src);
    if (!m) return;
    const end = findClose(src, /<Callout(?:\s+type="[a-z]+")?\s*>/, "</Callout>", m[0].length);
    if (end < 0) return;
    const after = /^<\/Callout>[ \t]*(?:\n|$)/.exec(src.slice(end));
    const raw = src.slice(0, end + (after ? after[0].length : "</Callout>".length));
    const tok = { type: "callout", raw, kind: calloutTypes.has(m[1]) ? m[1] : "note", tokens: [] as Token[] };
    this.lexer.blockTokens(src.slice(m[0].length, end), tok.tokens);
    return tok;
  },
  renderer(t) {
    const { kind, tokens } = t as CalloutToken;
    return `<aside class="callout callout-${kind}"><div class="callout-label">${kind}</div>${this.parser.parse(tokens)}</aside>`;
  },
};

const tabs: TokenizerExtension & RendererExtension = {
  name: "tabs",
  level: "block",
  start: startIn("<Tabs>"),
  tokenizer(src) {
    const m = /^<Tabs>[ \t]*\n?/.exec(src);
    if (!m) return;
    const end = findClose(src, /<Tabs>/, "</Tabs>", m[0].length);
    if (end < 0) return;
    const after = /^<\/Tabs>[ \t]*(?:\n|$)/.exec(src.slice(end));
    const raw = src.slice(0, end + (after ? after[0].length : "</Tabs>".length));
    const inner = src.slice(m[0].length, end);
    // Each pane is a <Tab title="..."> and the text to the next </Tab>,
    // found by searching forward only: a regular expression that tried
    // each <Tab in turn read to the end for every one left open.
    const panes: TabsToken["panes"] = [];
    const open = /<Tab\s+title="([^"\n]{0,500})"\s*>[ \t]*\n?/g;
    for (let t = open.exec(inner); t; t = open.exec(inner)) {
      const body = t.index + t[0].length;
      const end = inner.indexOf("</Tab>", body);
      if (end < 0) break;
      const tokens: Token[] = [];
      this.lexer.blockTokens(inner.slice(body, end), tokens);
      panes.push({ title: t[1], tokens });
      open.lastIndex = end + "</Tab>".length;
    }
    return { type: "tabs", raw, panes, tokens: [] };
  },
  childTokens: [],
  renderer(t) {
    const { panes } = t as TabsToken;
    const head = panes
      .map(
        (p, i) =>
          `<button type="button" class="tab${i === 0 ? " selected" : ""}" data-tab="${i}">${escapeHTML(p.title)}</button>`,
      )
      .join("");
    const body = panes
      .map(
        (p, i) =>
          `<div class="tab-pane${i === 0 ? " selected" : ""}" data-pane="${i}">${this.parser.parse(p.tokens)}</div>`,
      )
      .join("");
    return `<div class="tabs"><div class="tab-list">${head}</div>${body}</div>`;
  },
};

// setextLines is how many lines a setext heading's text (the lines above
// its === or --- line) may take. marked looks for the underline from every
// line of a list item's text to the item's end, which made a list item of
// 30,000 lines take 14 s; it now looks this far.
const setextLines = 64;

// taskIndex numbers the Plan's checkboxes within the block being converted
// (blockMarkup resets it), in the order the renderer meets them, which is
// the order taskOffsets finds their items.
let taskIndex = 0;

function makeMarked(breaks: boolean, components: boolean): Marked {
  const m = new Marked({ gfm: true, breaks });
  if (components) m.use({ extensions: [decision, commentRecord, callout, tabs] });
  m.use({
    tokenizer: {
      lheading(src: string) {
        let end = -1;
        for (let i = 0; i <= setextLines; i++) {
          end = src.indexOf("\n", end + 1);
          if (end < 0) break;
        }
        const head = end < 0 ? src : src.slice(0, end);
        // No underline that near: no setext heading here. Otherwise
        // marked's own, which stops at that underline.
        return /\n {0,3}(?:=+|-+)[ \t]*(?:\n|$)/.test(head) ? false : undefined;
      },
    },
    renderer: {
      html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHTML(text),
      checkbox: ({ checked }: Tokens.Checkbox) =>
        components
          ? `<input type="checkbox" class="task-box" data-task="${taskIndex++}"${checked ? " checked" : ""}> `
          : `<input type="checkbox" class="task-box" disabled${checked ? " checked" : ""}> `,
      code({ text, lang }: Tokens.Code) {
        const language = (lang || "").trim().split(/\s+/)[0];
        if (language === "mermaid")
          return `<div class="mermaid-block"><pre class="mermaid-source"><code>${escapeHTML(text)}</code></pre></div>`;
        const cls = language ? ` class="language-${escapeHTML(language)}"` : "";
        return `<pre><code${cls}>${escapeHTML(text)}</code></pre>`;
      },
      image({ href, text, title }: Tokens.Image) {
        // Only the document's own uploads show; every other image shows its alt text.
        if (/^\/images\/[0-9a-f]{64}\.[a-z]+$/.test(href) && text)
          return `<img src="${escapeHTML(href)}" alt="${escapeHTML(text)}"${title ? ` title="${escapeHTML(title)}"` : ""}>`;
        return `<span class="image-alt">${escapeHTML(text || "image")}</span>`;
      },
      link({ href, title, tokens }: Tokens.Link) {
        const inner = this.parser.parseInline(tokens);
        const external = /^https?:/i.test(href);
        return `<a href="${escapeHTML(href)}"${title ? ` title="${escapeHTML(title)}"` : ""}${external ? ' target="_blank" rel="noopener noreferrer"' : ""}>${inner}</a>`;
      },
    },
  });
  return m;
}

const planMarked = makeMarked(false, true);
const chatMarked = makeMarked(true, false);

// DOMPurify needs a DOM; the unit tests under Node have none and never sanitise.
if (typeof DOMPurify.addHook === "function")
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && node.getAttribute("target") === "_blank")
      node.setAttribute("rel", "noopener noreferrer");
  });

// The only input that survives is a task item's checkbox as the renderer
// writes it (class "task-box", type checkbox), with only the attributes it
// writes: no other type, no name, value or form.
const taskBoxAttrs = new Set(["type", "class", "checked", "disabled", "data-task"]);
const isTaskBox = (node: Element) =>
  node.getAttribute("type") === "checkbox" && node.getAttribute("class") === "task-box";
if (typeof DOMPurify.addHook === "function") {
  DOMPurify.addHook("uponSanitizeElement", (node, data) => {
    if (data.tagName === "input" && !isTaskBox(node as Element)) node.parentNode?.removeChild(node);
  });
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName !== "INPUT") return;
    for (const name of node.getAttributeNames()) if (!taskBoxAttrs.has(name)) node.removeAttribute(name);
    const n = node.getAttribute("data-task");
    if (n !== null && !/^\d{1,6}$/.test(n)) node.removeAttribute("data-task");
  });
}

const purifyConfig = { ADD_ATTR: ["target"], FORBID_TAGS: ["style", "form"] };

export const sanitize = (html: string) => DOMPurify.sanitize(html, purifyConfig);

// sanitizeFragment is sanitize's result as a fragment.
const sanitizeFragment = (html: string) => DOMPurify.sanitize(html, { ...purifyConfig, RETURN_DOM_FRAGMENT: true });

// plainMarkup is text shown as it is, with a note that it is: what a
// message or block whose Markdown could not be converted shows. It is
// built of escaped text only, so it is safe unsanitised.
export const plainMarkup = (text: string, what: "message" | "block" = "message") =>
  `<p class="md-fallback muted small">This ${what} could not be shown as Markdown, so it is shown as plain text.</p>` +
  `<p class="md-plain">${escapeHTML(text).replace(/\n/g, "<br>")}</p>`;

// withFallback is render(text), or text as plain markup when render throws
// (marked overflowing its stack, say): one message or block that cannot be
// converted never takes the others with it.
export function withFallback(text: string, render: (text: string) => string, what: "message" | "block" = "message") {
  try {
    return render(text);
  } catch (e) {
    console.warn(`A ${what} could not be converted from Markdown:`, e);
    return plainMarkup(text, what);
  }
}

// A block's place in the plan's source is from..to (its text without the
// blank lines after it), so the Preview can show the Planner's marks on it.
// An HTML block's tasks are where in the plan its checkboxes' items have
// their "[ ]" or "[x]", in data-task order (-1 for one not found).
export type PlanBlock = (
  { kind: "html"; key: string; html: string; tasks: number[] } | { kind: "decision"; key: string; id: string }
) & {
  from: number;
  to: number;
};

// A mark to show in the rendered plan: the blocks of source from..to get a
// coloured bar (added, changed), or a thin "removed" line goes at from.
export interface PlanMark {
  kind: "added" | "changed" | "removed";
  from: number;
  to: number;
}

// A plan's top-level token, with the source it came from: marked reads the
// plan with its nesting bounded (markdownbound.ts), whose offsets differ
// from the plan's by the backslashes added.
interface PlanToken {
  token: Token;
  from: number;
  to: number;
  source: string; // the block's own text in the plan
  tasks: number[]; // its checkboxes' brackets in the plan (PlanBlock)
}

// A list item as the lexer leaves it: a task's checkbox is its first
// token, or its paragraph's first when the list is loose.
const hasBox = (item: Tokens.ListItem) => {
  const first = item.tokens[0] as Token | undefined;
  return first?.type === "checkbox" || (first as Tokens.Paragraph | undefined)?.tokens?.[0]?.type === "checkbox";
};

// taskOffsets is where in raw, the text of a top-level token, the "[ ]" or
// "[x]" of each task item is, in the order the renderer numbers their
// checkboxes (depth first). The lexer keeps no offsets, and a nested
// item's raw lost its indentation and its block quotes' ">", so each
// item's first line up to its brackets is searched for from the last one
// found, at the start of a line after only such prefixes; -1 for one that
// is not found.
function taskOffsets(token: Token, raw: string): number[] {
  const out: number[] = [];
  let cursor = 0;
  const find = (item: Tokens.ListItem) => {
    const m = /\[[ xX]\]/.exec(item.raw);
    if (!m) return out.push(-1);
    const head = item.raw.slice(0, m.index + 3).replace(/^\s+/, "");
    for (let at = raw.indexOf(head, cursor); at >= 0; at = raw.indexOf(head, at + 1)) {
      const line = raw.lastIndexOf("\n", at - 1) + 1;
      if (!/^[ \t>*+\-\d.)]*$/.test(raw.slice(line, at))) continue;
      cursor = at + head.length;
      return out.push(at + head.length - 3);
    }
    out.push(-1);
  };
  const walk = (tokens: Token[]) => {
    for (const t of tokens) {
      if (t.type === "list")
        for (const item of (t as Tokens.List).items) {
          if (hasBox(item)) find(item);
          walk(item.tokens);
        }
      else if (t.type === "tabs") for (const p of (t as TabsToken).panes) walk(p.tokens);
      else if ("tokens" in t && Array.isArray(t.tokens)) walk(t.tokens);
    }
  };
  walk([token]);
  return out;
}

// lexPlan is the plan's top-level tokens and link definitions. When even
// the bounded plan cannot be read, each run of lines between blank lines
// is a block of plain text.
function lexPlan(source: string): { tokens: PlanToken[]; links: TokensList["links"] } {
  const b = bound(source, true);
  let tokens: TokensList;
  try {
    scanBudget = planScanBudget(source);
    tokens = planMarked.lexer(b.text);
  } catch (e) {
    console.warn("The plan could not be read as Markdown:", e);
    const out: PlanToken[] = [];
    for (const m of source.matchAll(/[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*/g)) {
      const raw = m[0];
      out.push({
        token: { type: "plain", raw } as Token,
        from: m.index,
        to: m.index + raw.length,
        source: raw,
        tasks: [],
      });
    }
    return { tokens: out, links: {} as TokensList["links"] };
  } finally {
    scanBudget = Infinity;
  }
  const out: PlanToken[] = [];
  let pos = 0; // each token's place in the bounded text: their raw texts make it up
  for (const t of tokens) {
    const at = pos;
    pos += t.raw.length;
    if (t.type === "space") continue;
    const from = sourceOffset(b, at);
    const to = sourceOffset(b, at + t.raw.trimEnd().length);
    const tasks = /\[[ xX]\]/.test(t.raw)
      ? taskOffsets(t, t.raw).map((rel) => (rel < 0 ? -1 : sourceOffset(b, at + rel)))
      : [];
    out.push({ token: t, from, to, source: source.slice(from, to), tasks });
  }
  return { tokens: out, links: tokens.links };
}

// blockMarkup is one top-level token as HTML, before it is sanitised.
function blockMarkup(t: PlanToken, links: TokensList["links"]): string {
  if (t.token.type === "plain") return plainMarkup(t.source, "block");
  taskIndex = 0;
  return withFallback(t.source, () => planMarked.parser(Object.assign([t.token], { links })), "block");
}

// planMarkup is the plan's top-level blocks as HTML before it is
// sanitised, each with its place in the source; a decision card's is "".
export function planMarkup(source: string): { from: number; to: number; markup: string }[] {
  const { tokens, links } = lexPlan(source);
  return tokens.map((t) => ({
    from: t.from,
    to: t.to,
    markup: t.token.type === "decision" ? "" : blockMarkup(t, links),
  }));
}

// blockCache holds each top-level block's sanitised HTML by its source (and
// the plan's link definitions, which any block may use): an edit converts
// only the blocks it changed.
const blockCache = new Map<string, string>();
const maxCachedBlocks = 8000;

// planBlocks is the plan as its top-level blocks, each converted and
// sanitised once per source. A block's key is a digest of its source (and
// which repeat of that source it is), so a view keyed by it re-renders only
// the blocks an edit changed.
let lastBlocks: { source: string; blocks: PlanBlock[] } | null = null;
export function planBlocks(source: string): PlanBlock[] {
  if (lastBlocks?.source === source) return lastBlocks.blocks;
  const blocks = convertPlan(source);
  lastBlocks = { source, blocks };
  return blocks;
}

type Todo = { block: { html: string }; digest: string; token: PlanToken };

function convertPlan(source: string): PlanBlock[] {
  const { tokens, links } = lexPlan(source);
  const linkKey = Object.keys(links).length ? JSON.stringify(links) : "";
  const seen = new Map<string, number>();
  const out: PlanBlock[] = [];
  const todo: Todo[] = [];
  for (const t of tokens) {
    const { from, to } = t;
    if (t.token.type === "decision") {
      const id = (t.token as DecisionToken).id;
      out.push({ kind: "decision", key: "d" + id, id, from, to });
      continue;
    }
    const raw = t.token.raw;
    const digest = linkKey + "\u0000" + raw;
    const n = seen.get(raw) ?? 0;
    seen.set(raw, n + 1);
    const block = {
      kind: "html" as const,
      key: `${digest32(raw)}.${raw.length}.${n}`,
      html: "",
      tasks: t.tasks,
      from,
      to,
    };
    const html = blockCache.get(digest);
    if (html === undefined) todo.push({ block, digest, token: t });
    else block.html = html;
    out.push(block);
  }
  convertBlocks(todo, links);
  return out;
}

// convertBlocks converts and sanitises blocks, each on its own (one that
// fails shows as plain text) but sanitised together, in one pass, and
// keeps each in the cache.
function convertBlocks(todo: Todo[], links: TokensList["links"]) {
  if (!todo.length) return;
  const markup = todo.map(({ token }) => blockMarkup(token, links));
  let parts: (string | undefined)[];
  try {
    const joined = markup.map((m) => `<div data-plan-block="">${m}</div>`).join("");
    parts = Array.from(sanitizeFragment(joined).children, (c) => c.innerHTML);
  } catch {
    parts = markup.map((m, i) => {
      try {
        return sanitize(m);
      } catch {
        return plainMarkup(todo[i].token.source, "block");
      }
    });
  }
  todo.forEach(({ block, digest }, i) => {
    block.html = parts[i] ?? "";
    if (blockCache.size >= maxCachedBlocks) blockCache.delete(blockCache.keys().next().value!);
    blockCache.set(digest, block.html);
  });
}

// warmPlanBlocks prepares planBlocks(source) a batch at a time: each call
// of the step it returns converts up to batch blocks not converted yet, and
// says whether any are left. The Preview is then ready before it is asked.
export function warmPlanBlocks(source: string, batch = 40): () => boolean {
  const { tokens, links } = lexPlan(source);
  const linkKey = Object.keys(links).length ? JSON.stringify(links) : "";
  let i = 0;
  return () => {
    const todo: Todo[] = [];
    for (; i < tokens.length && todo.length < batch; i++) {
      const t = tokens[i];
      if (t.token.type === "decision") continue;
      const digest = linkKey + "\u0000" + t.token.raw;
      if (!blockCache.has(digest) && !todo.some((x) => x.digest === digest))
        todo.push({ block: { html: "" }, digest, token: t });
    }
    convertBlocks(todo, links);
    if (i < tokens.length) return true;
    planBlocks(source); // every block is converted: this only keeps the list
    return false;
  };
}

// digest32 is FNV-1a of s: a block's identity for keying, not security.
function digest32(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

// chatMarkup is a Chat message as HTML, before it is sanitised: a line
// break is a line break.
export const chatMarkup = (text: string) =>
  withFallback(text, (t) => chatMarked.parse(bound(t).text) as string, "message");

// renderChat is the Markdown Chat renders, sanitised.
export function renderChat(text: string): string {
  const html = chatMarkup(text);
  try {
    return sanitize(html);
  } catch {
    return plainMarkup(text);
  }
}

// renderInline is for a card's heading: inline Markdown only, so a line that
// looks like a list or a heading stays text.
export function renderInline(text: string): string {
  try {
    return sanitize(withFallback(text, (t) => chatMarked.parseInline(bound(t).text) as string));
  } catch {
    return plainMarkup(text);
  }
}

// cardText splits a question into its heading (the first line) and body.
export function cardText(question: string): { heading: string; body: string } {
  const i = question.indexOf("\n");
  if (i < 0) return { heading: question, body: "" };
  return { heading: question.slice(0, i), body: question.slice(i + 1).replace(/^\n+/, "") };
}
