// Markdown that nests deeper than anyone writes, or repeats a delimiter
// thousands of times (tests/corpus.mjs), converts to bounded HTML without
// throwing and in time in proportion to its length; and one message or
// block that cannot be converted shows as plain text with a note, alone
// (src/markdown.ts; docs/room-protocol.md, "How deep Markdown is read").
// Sanitising needs a DOM, which Node lacks: these tests check the markup
// before it; the browser walk (markdown-browser.mjs) checks the rest.

import { test } from "node:test";
import assert from "node:assert/strict";
import { pathological } from "./corpus.mjs";
import { chatMarkup, maxDepth, planMarkup, withFallback } from "../src/markdown";

// tagDepth is how deeply the elements of html nest (void elements aside).
function tagDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  for (const m of html.matchAll(/<(\/?)([a-z][a-z0-9]*)[^>]*?(\/?)>/g)) {
    if (["br", "hr", "img", "input"].includes(m[2]) || m[3]) continue;
    depth += m[1] ? -1 : 1;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

// A list is two elements a level (ul, li), and a paragraph or an
// emphasis may sit in the deepest; the bounds allow a few more for the
// Plan's components.
const deepestAllowed = 2 * maxDepth + 8;

const fallbackNote = /could not be shown as Markdown/;

test("a Chat message of 2,000 '>' shows 32 block quotes and the rest as text", () => {
  const html = chatMarkup(">".repeat(2000));
  assert.equal(html.match(/<blockquote>/g)?.length, maxDepth);
  assert.ok(html.includes("&gt;".repeat(2000 - maxDepth)), "the deeper markers are text");
  assert.doesNotMatch(html, fallbackNote);
});

for (const { name, text } of pathological(64 * 1024)) {
  test(`Chat: ${name}`, { timeout: 120_000 }, () => {
    const html = chatMarkup(text);
    assert.doesNotMatch(html, fallbackNote);
    assert.ok(tagDepth(html) <= deepestAllowed, `nested ${tagDepth(html)} deep`);
  });

  test(`Plan: ${name}`, { timeout: 120_000 }, () => {
    const source = "# Before\n\n" + text + "\n\nAfter the block.\n";
    const blocks = planMarkup(source);
    // The block after the text shows, on its own or, after a fence left
    // open, as the end of the code.
    const last = blocks[blocks.length - 1];
    assert.match(last.markup, /After the block\./);
    assert.ok(source.slice(last.from, last.to).endsWith("After the block."));
    assert.equal(source.slice(blocks[0].from, blocks[0].to), "# Before");
    for (const b of blocks) {
      assert.doesNotMatch(b.markup, fallbackNote);
      assert.ok(tagDepth(b.markup) <= deepestAllowed, `a block nested ${tagDepth(b.markup)} deep`);
    }
    for (let i = 1; i < blocks.length; i++) assert.ok(blocks[i - 1].to <= blocks[i].from, "blocks in order");
  });
}

test("a deep line in the plan keeps its place: every block's offsets are the source's", () => {
  const deep = ">".repeat(2000) + " a";
  const source = "# Plan\n\n" + deep + "\n\n- b\n\n" + deep + "\n";
  const blocks = planMarkup(source);
  assert.deepEqual(
    blocks.map((b) => source.slice(b.from, b.to)),
    ["# Plan", deep, "- b", deep],
  );
});

test("Markdown that cannot be converted shows as plain text with a note", () => {
  const html = withFallback("a <b> & c\nsecond line", () => {
    throw new RangeError("Maximum call stack size exceeded");
  });
  assert.match(html, fallbackNote);
  assert.ok(html.includes("a &lt;b&gt; &amp; c<br>second line"), html);
  assert.equal(
    withFallback("x", () => "<p>x</p>"),
    "<p>x</p>",
  );
});

test("within the bounds, Markdown converts as before", () => {
  const nested = "> ".repeat(maxDepth) + "quoted";
  assert.equal(chatMarkup(nested).match(/<blockquote>/g)?.length, maxDepth);
  const list = Array.from({ length: 10 }, (_, i) => "  ".repeat(i) + "- item " + i).join("\n");
  assert.equal(chatMarkup(list).match(/<ul>/g)?.length, 10);
  assert.equal(
    chatMarkup("*a **b** c* `*x*` \\*y\\*"),
    "<p><em>a <strong>b</strong> c</em> <code>*x*</code> *y*</p>\n",
  );
  assert.equal(chatMarkup("```\n" + ">".repeat(40) + "\n```"), "<pre><code>" + "&gt;".repeat(40) + "</code></pre>");
});

test("the Plan editor reads a plan nested past the bounds without Markdown, and with it again after", async () => {
  const { EditorState } = await import("@codemirror/state");
  const { language } = await import("@codemirror/language");
  const { planLanguage, loadPlanLanguage } = await import("../src/editormarkdown");
  await loadPlanLanguage(); // an editor in a page loads it when it opens
  const deep = "- ".repeat(16_000) + "a\n";
  const plain = EditorState.create({ doc: deep, extensions: planLanguage(deep) });
  assert.equal(plain.facet(language), null, "no Markdown parser for a deep plan");
  const md = EditorState.create({ doc: "# Plan\n", extensions: planLanguage("# Plan\n") });
  assert.equal(md.facet(language)?.name, "markdown");
  // A paste of deep text turns the parser off before it reads it, and
  // replacing it turns it on again.
  const pasted = md.update({ changes: { from: md.doc.length, insert: deep } }).state;
  assert.equal(pasted.facet(language), null);
  // So does a paragraph of thousands of delimiters, which nests nothing.
  const mixed = "*_".repeat(16_000) + "a" + "_*".repeat(16_000);
  assert.equal(EditorState.create({ doc: mixed, extensions: planLanguage(mixed) }).facet(language), null);
  const back = pasted.update({
    changes: { from: 0, to: pasted.doc.length, insert: "# Plan\n\n" + "text ".repeat(200) },
  }).state;
  assert.equal(back.facet(language)?.name, "markdown");
});
