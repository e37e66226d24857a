// Syntax colours for fenced code in the Preview, Chat and Decision cards.
// highlight.js (core and a few languages, hljs-languages.ts) is a chunk of
// its own, loaded the first time a fence with a language it knows is on the
// page; the first load carries only this file. Code is coloured where it
// appears: an observer on the workspace finds new `code.language-*`
// elements, however they were rendered. highlight.js reads the element's
// text and writes escaped spans, so what it colours cannot become markup.

type HLJS = typeof import("highlight.js/lib/core").default;

let loading: Promise<HLJS> | null = null;

function load(): Promise<HLJS> {
  if (!loading) loading = import("./hljs-languages").then((m) => m.default);
  return loading;
}

const selector = 'pre > code[class*="language-"]:not([data-hl])';

async function colour(codes: HTMLElement[]) {
  // Claimed before the first await, so overlapping calls colour once.
  for (const code of codes) code.dataset.hl = "";
  const hljs = await load();
  for (const code of codes) {
    const lang = /\blanguage-(\S+)/.exec(code.className)?.[1] ?? "";
    if (!code.isConnected || !hljs.getLanguage(lang)) continue;
    const text = code.textContent ?? "";
    // Very long blocks stay plain: colouring them would stall the page.
    if (text.length > 100_000) continue;
    code.innerHTML = hljs.highlight(text, { language: lang, ignoreIllegals: true }).value;
    code.dataset.hl = lang;
  }
}

function scan(root: ParentNode) {
  const codes = Array.from(root.querySelectorAll<HTMLElement>(selector));
  if (codes.length) void colour(codes);
}

// observeCode colours the code under root now and whenever more appears;
// the returned function stops it.
export function observeCode(root: HTMLElement): () => void {
  scan(root);
  let queued = false;
  const observer = new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      scan(root);
    });
  });
  observer.observe(root, { childList: true, subtree: true });
  return () => observer.disconnect();
}
