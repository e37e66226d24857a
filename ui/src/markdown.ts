// Markdown for the Plan, Chat and Decision cards: marked with raw HTML
// escaped (never rendered), then DOMPurify. The Plan's MDX components
// (<Callout>, <Tabs>/<Tab>, the server's <Decision id="..." />) are parsed by
// marked extensions into our own markup; nothing else that looks like a tag
// is ever a tag. Mermaid fences become placeholders that mermaid.ts draws.

import {
  Marked,
  type Token,
  type Tokens,
  type TokensList,
  type TokenizerExtension,
  type RendererExtension,
} from "marked";
import DOMPurify from "dompurify";

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

// findClose finds the closing tag of a component that may nest.
function findClose(src: string, open: RegExp, close: string, from: number): number {
  let depth = 1;
  const re = new RegExp(`${open.source}|${close.replace(/[/]/g, "\\/")}`, "g");
  re.lastIndex = from;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    if (m[0].startsWith(close)) {
      if (--depth === 0) return m.index;
    } else depth++;
  }
  return -1;
}

const decision: TokenizerExtension & RendererExtension = {
  name: "decision",
  level: "block",
  start: (src) => src.match(/^<Decision /m)?.index,
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
  start: (src) => src.match(/^<Comment /m)?.index,
  tokenizer(src) {
    const m = /^<Comment id="([^"]*)" \/>[ \t]*(?:\n|$)/.exec(src);
    if (m) return { type: "commentRecord", raw: m[0], id: m[1] };
  },
  renderer: (t) => `<div class="comment-record-slot" data-comment="${escapeHTML((t as DecisionToken).id)}"></div>`,
};

const callout: TokenizerExtension & RendererExtension = {
  name: "callout",
  level: "block",
  start: (src) => src.match(/^<Callout/m)?.index,
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
  start: (src) => src.match(/^<Tabs>/m)?.index,
  tokenizer(src) {
    const m = /^<Tabs>[ \t]*\n?/.exec(src);
    if (!m) return;
    const end = findClose(src, /<Tabs>/, "</Tabs>", m[0].length);
    if (end < 0) return;
    const after = /^<\/Tabs>[ \t]*(?:\n|$)/.exec(src.slice(end));
    const raw = src.slice(0, end + (after ? after[0].length : "</Tabs>".length));
    const inner = src.slice(m[0].length, end);
    const panes: TabsToken["panes"] = [];
    const re = /<Tab\s+title="([^"]*)"\s*>[ \t]*\n?([\s\S]*?)<\/Tab>/g;
    for (let t = re.exec(inner); t; t = re.exec(inner)) {
      const tokens: Token[] = [];
      this.lexer.blockTokens(t[2], tokens);
      panes.push({ title: t[1], tokens });
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

function makeMarked(breaks: boolean, components: boolean): Marked {
  const m = new Marked({ gfm: true, breaks });
  if (components) m.use({ extensions: [decision, commentRecord, callout, tabs] });
  m.use({
    renderer: {
      html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHTML(text),
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

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.getAttribute("target") === "_blank") node.setAttribute("rel", "noopener noreferrer");
});

export const sanitize = (html: string) =>
  DOMPurify.sanitize(html, { ADD_ATTR: ["target"], FORBID_TAGS: ["style", "form", "input"] });

// sanitizeFragment is sanitize's result as a fragment.
const sanitizeFragment = (html: string) =>
  DOMPurify.sanitize(html, {
    ADD_ATTR: ["target"],
    FORBID_TAGS: ["style", "form", "input"],
    RETURN_DOM_FRAGMENT: true,
  });

// A block's place in the plan's source is from..to (its text without the
// blank lines after it), so the Preview can show the Planner's marks on it.
export type PlanBlock = (
  { kind: "html"; key: string; html: string } | { kind: "decision"; key: string; id: string }
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

function convertPlan(source: string): PlanBlock[] {
  const tokens = planMarked.lexer(source);
  const links = tokens.links;
  const linkKey = Object.keys(links).length ? JSON.stringify(links) : "";
  const seen = new Map<string, number>();
  const out: PlanBlock[] = [];
  const todo: { block: { html: string }; digest: string; token: Token }[] = [];
  let pos = 0; // each token's place in source: their raw texts make it up
  for (const t of tokens) {
    const from = pos;
    const to = from + t.raw.trimEnd().length;
    pos += t.raw.length;
    if (t.type === "space") continue;
    if (t.type === "decision") {
      const id = (t as DecisionToken).id;
      out.push({ kind: "decision", key: "d" + id, id, from, to });
      continue;
    }
    const digest = linkKey + "\u0000" + t.raw;
    const n = seen.get(t.raw) ?? 0;
    seen.set(t.raw, n + 1);
    const block = { kind: "html" as const, key: `${digest32(t.raw)}.${t.raw.length}.${n}`, html: "", from, to };
    const html = blockCache.get(digest);
    if (html === undefined) todo.push({ block, digest, token: t });
    else block.html = html;
    out.push(block);
  }
  convertBlocks(todo, links);
  return out;
}

// convertBlocks converts and sanitises blocks together (one parse for them
// all) and keeps each in the cache.
function convertBlocks(todo: { block: { html: string }; digest: string; token: Token }[], links: TokensList["links"]) {
  if (!todo.length) return;
  const joined = todo
    .map(({ token }) => `<div data-plan-block="">${planMarked.parser(Object.assign([token], { links }))}</div>`)
    .join("");
  const parts = Array.from(sanitizeFragment(joined).children);
  todo.forEach(({ block, digest }, i) => {
    block.html = parts[i]?.innerHTML ?? "";
    if (blockCache.size >= maxCachedBlocks) blockCache.delete(blockCache.keys().next().value!);
    blockCache.set(digest, block.html);
  });
}

// warmPlanBlocks prepares planBlocks(source) a batch at a time: each call
// of the step it returns converts up to batch blocks not converted yet, and
// says whether any are left. The Preview is then ready before it is asked.
export function warmPlanBlocks(source: string, batch = 40): () => boolean {
  const tokens = planMarked.lexer(source);
  const links = tokens.links;
  const linkKey = Object.keys(links).length ? JSON.stringify(links) : "";
  let i = 0;
  return () => {
    const todo: { block: { html: string }; digest: string; token: Token }[] = [];
    for (; i < tokens.length && todo.length < batch; i++) {
      const t = tokens[i];
      if (t.type === "space" || t.type === "decision") continue;
      const digest = linkKey + "\u0000" + t.raw;
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

// renderChat is the Markdown Chat renders: a line break is a line break.
export const renderChat = (text: string) => sanitize(chatMarked.parse(text) as string);

// renderInline is for a card's heading: inline Markdown only, so a line that
// looks like a list or a heading stays text.
export const renderInline = (text: string) => sanitize(chatMarked.parseInline(text) as string);

// cardText splits a question into its heading (the first line) and body.
export function cardText(question: string): { heading: string; body: string } {
  const i = question.indexOf("\n");
  if (i < 0) return { heading: question, body: "" };
  return { heading: question.slice(0, i), body: question.slice(i + 1).replace(/^\n+/, "") };
}
