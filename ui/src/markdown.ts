// Markdown for the Plan, Chat and Decision cards: marked with raw HTML
// escaped (never rendered), then DOMPurify. The Plan's MDX components
// (<Callout>, <Tabs>/<Tab>, the server's <Decision id="..." />) are parsed by
// marked extensions into our own markup; nothing else that looks like a tag
// is ever a tag. Mermaid fences become placeholders that mermaid.ts draws.

import { Marked, type Token, type Tokens, type TokenizerExtension, type RendererExtension } from "marked";
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
  if (components) m.use({ extensions: [decision, callout, tabs] });
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

export type PlanSegment = { kind: "html"; html: string } | { kind: "decision"; id: string };

// A mark to show in the rendered plan: the blocks of source from..to get a
// coloured bar (added, changed), or a thin "removed" line goes at from.
export interface PlanMark {
  kind: "added" | "changed" | "removed";
  from: number;
  to: number;
}

// renderPlan splits the plan at its top-level <Decision> lines, so the cards
// can be live components between sanitised HTML chunks. A top-level block
// that a mark covers is wrapped in its own element, data-change being the
// mark's index.
export function renderPlan(source: string, marks: readonly PlanMark[] = []): PlanSegment[] {
  const tokens = planMarked.lexer(source);
  const out: PlanSegment[] = [];
  let run: Token[] = [];
  const flush = () => {
    if (!run.length) return;
    const list = Object.assign(run, { links: tokens.links });
    out.push({ kind: "html", html: sanitize(planMarked.parser(list)) });
    run = [];
  };
  // Each top-level token's place in source (their raw texts make it up).
  let pos = 0;
  const removedLeft = marks.map((m, i) => ({ m, i })).filter(({ m }) => m.kind === "removed");
  const removedLine = (i: number) =>
    `<div class="plan-change-removed" data-change="${i}" aria-label="The Planner removed a block here">removed</div>`;
  for (const t of tokens) {
    const from = pos;
    const to = from + t.raw.trimEnd().length;
    pos += t.raw.length;
    if (t.type === "space") {
      run.push(t);
      continue;
    }
    while (removedLeft.length && removedLeft[0].m.from <= from) {
      flush();
      out.push({ kind: "html", html: removedLine(removedLeft.shift()!.i) });
    }
    if (t.type === "decision") {
      flush();
      out.push({ kind: "decision", id: (t as DecisionToken).id });
      continue;
    }
    const hit = marks.findIndex((m) => m.kind !== "removed" && m.from < Math.max(to, from + 1) && from < m.to);
    if (hit < 0) {
      run.push(t);
      continue;
    }
    flush();
    const list = Object.assign([t], { links: tokens.links });
    const html = sanitize(planMarked.parser(list));
    const label = marks[hit].kind === "added" ? "Added by the Planner" : "Changed by the Planner";
    out.push({
      kind: "html",
      html: `<div class="plan-change plan-change-${marks[hit].kind}" data-change="${hit}" title="${label}">${html}</div>`,
    });
  }
  flush();
  for (const { i } of removedLeft) out.push({ kind: "html", html: removedLine(i) });
  return out;
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
