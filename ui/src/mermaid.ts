// Draws ```mermaid fences: the Mermaid library is a chunk of its own, loaded
// the first time a diagram is on screen, with strict security and labels
// drawn as SVG text, never HTML. Diagrams take the page's theme (Mermaid's
// "neutral" in light, "dark" in dark) and are drawn again when it changes.

import { effectiveTheme, onTheme } from "./theme";

type Mermaid = typeof import("mermaid").default;

let loading: Promise<Mermaid> | null = null;
let counter = 0;
let drawnTheme = "";

function configure(mm: Mermaid) {
  drawnTheme = effectiveTheme();
  mm.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    htmlLabels: false,
    flowchart: { htmlLabels: false },
    theme: drawnTheme === "dark" ? "dark" : "neutral",
    fontFamily: "inherit",
  });
}

function mermaid(): Promise<Mermaid> {
  if (!loading) {
    loading = import("mermaid").then((m) => {
      const mm = m.default;
      // Labels are SVG text, never HTML: an <img> in a label is not drawn,
      // so a diagram cannot load anything from elsewhere.
      configure(mm);
      return mm;
    });
  }
  return loading;
}

// drawDiagrams replaces every undrawn Mermaid source under root by its
// diagram; source Mermaid cannot draw stays as code.
export async function drawDiagrams(root: HTMLElement) {
  // A reply still streaming is not drawn until its text is final.
  const blocks = Array.from(root.querySelectorAll<HTMLElement>(".mermaid-block:not([data-drawn])")).filter(
    (b) => !b.closest(".status-streaming"),
  );
  return drawBlocks(blocks);
}

// drawBlocks draws the given Mermaid blocks that are not drawn yet: the
// Preview's, as each scrolls into view.
export async function drawBlocks(all: HTMLElement[]) {
  const blocks = all.filter((b) => !b.dataset.drawn);
  if (!blocks.length) return;
  // Claimed before the first await, so overlapping calls (the plan's and a
  // card's within it) never draw one block twice.
  for (const block of blocks) block.dataset.drawn = "1";
  const mm = await mermaid();
  if (drawnTheme !== effectiveTheme()) configure(mm);
  for (const block of blocks) {
    const source = block.querySelector(".mermaid-source")?.textContent ?? "";
    try {
      const { svg } = await mm.render(`mermaid-${++counter}`, source);
      const figure = document.createElement("div");
      figure.className = "mermaid-diagram";
      figure.dataset.theme = drawnTheme;
      figure.innerHTML = svg;
      block.querySelector(".mermaid-source")?.classList.add("hidden");
      block.prepend(figure);
      const expand = document.createElement("button");
      expand.type = "button";
      expand.className = "link mermaid-expand";
      expand.textContent = "Expand diagram";
      expand.onclick = () => {
        const open = block.classList.toggle("expanded");
        expand.textContent = open ? "Collapse diagram" : "Expand diagram";
      };
      block.append(expand);
    } catch {
      block.classList.add("mermaid-failed");
      document.getElementById(`dmermaid-${counter}`)?.remove();
    }
  }
}

// A theme change draws every diagram on the page again in the new theme.
onTheme(() => {
  if (!loading || drawnTheme === effectiveTheme()) return;
  const roots = new Set<HTMLElement>();
  for (const block of document.querySelectorAll<HTMLElement>(".mermaid-block[data-drawn]")) {
    block.querySelector(".mermaid-diagram")?.remove();
    block.querySelector(".mermaid-expand")?.remove();
    block.querySelector(".mermaid-source")?.classList.remove("hidden");
    block.classList.remove("mermaid-failed", "expanded");
    delete block.dataset.drawn;
    roots.add(block.parentElement ?? block);
  }
  roots.forEach((r) => drawDiagrams(r));
});
