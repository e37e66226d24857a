// The pathological Markdown: inputs that made marked (or the Preview's own
// steps) throw, or cost time out of proportion to their length. The unit
// tests (markdown.test.ts) and the browser walk (markdown-browser.mjs)
// share them; room/outline_corpus_test.go holds the server's.
//
//   pathological(size) -> [{ name, text }], each text at most size UTF-16
//   units (all ASCII, so as many bytes), a plain one first: the baseline.

const repeatTo = (unit, size) => unit.repeat(Math.max(1, Math.floor(size / unit.length)));

function linesTo(size, line) {
  let out = "";
  for (let i = 0; ; i++) {
    const l = line(i) + "\n";
    if (out.length + l.length > size) return out || l;
    out += l;
  }
}

export function pathological(size) {
  const half = Math.floor(size / 2);
  let deep = "";
  for (let i = 0; i < 200 && deep.length + 2 * i + 4 <= size / 4; i++) deep += "  ".repeat(i) + "- a\n";
  const nest = (open, close, n) => open.repeat(n) + "x\n" + close.repeat(n);
  return [
    {
      name: "plain",
      text: linesTo(size, (i) =>
        i % 2 ? "" : "A plain paragraph of the plan, with **some** emphasis and a [link](/x).",
      ),
    },
    // Nesting of every kind on one line.
    { name: "quotes", text: ">".repeat(size - 1) + "\n" },
    { name: "quotes-spaced", text: repeatTo("> ", size - 2) + "a\n" },
    { name: "bullets", text: repeatTo("- ", size - 2) + "a\n" },
    { name: "ordered", text: repeatTo("1. ", size - 2) + "a\n" },
    { name: "quotes-and-lists", text: repeatTo("> - 1) ", size - 2) + "a\n" },
    // Nesting over lines.
    { name: "quote-stairs", text: linesTo(size, (i) => ">".repeat(i + 1) + " a") },
    { name: "list-stairs", text: linesTo(size, (i) => "  ".repeat(i) + "- a") },
    { name: "tab-stairs", text: linesTo(size, (i) => "\t".repeat(i) + "- a") },
    { name: "quoted-list-stairs", text: linesTo(size, (i) => "> " + "  ".repeat(i) + "- a") },
    { name: "long-list-item", text: "- a\n" + repeatTo("  b\n", size - 4) },
    { name: "deep-list-blank-lines", text: deep + "\n".repeat(Math.max(size - deep.length - 8, 0)) + "  last\n" },
    // Inline nesting and long runs of delimiters.
    { name: "brackets", text: "[".repeat(half - 1) + "]".repeat(half - 1) + "\n" },
    { name: "links", text: "[".repeat(Math.floor(size / 6)) + "a" + "](b)".repeat(Math.floor(size / 6)) + "\n" },
    { name: "emphasis", text: "*".repeat(half - 1) + "a" + "*".repeat(half - 2) + "\n" },
    { name: "emphasis-mixed", text: repeatTo("*_", half - 1) + "a" + repeatTo("_*", half - 2) + "\n" },
    { name: "emphasis-words", text: repeatTo("*a ", half - 1) + repeatTo("a* ", half - 2) + "\n" },
    { name: "strong-words", text: repeatTo("**a ", half - 1) + repeatTo("a** ", half - 2) + "\n" },
    { name: "link-words", text: repeatTo("[a ", half - 1) + repeatTo("](b) ", half - 2) + "\n" },
    { name: "backticks", text: "`".repeat(size - 1) + "\n" },
    { name: "code-spans", text: repeatTo("`a", size - 1) + "\n" },
    { name: "tildes", text: "~".repeat(size - 1) + "\n" },
    { name: "angles", text: "<".repeat(size - 1) + "\n" },
    { name: "escapes", text: "\\".repeat(size - 1) + "\n" },
    { name: "fences", text: repeatTo("```\n", size) },
    { name: "html", text: repeatTo("<div>\n", size) },
    // Huge tables.
    {
      name: "table-wide",
      text: ["|a", "|-", "|b"].map((c) => c.repeat(Math.floor(size / 6) - 1) + "|\n").join(""),
    },
    { name: "table-long", text: "| a | b |\n| - | - |\n" + repeatTo("| c | d |\n", size - 20) },
    { name: "definitions", text: repeatTo("[a]: /u\n", size) },
    { name: "setext", text: repeatTo("a\n=\n", size) },
    // The Plan's components, left open and nested.
    { name: "callouts-open", text: repeatTo("<Callout>\n\n", size) },
    { name: "callouts-nested", text: nest("<Callout>\n", "</Callout>\n", Math.floor(size / 21)) },
    { name: "tabs-nested", text: nest('<Tabs>\n<Tab title="t">\n', "</Tab>\n</Tabs>\n", Math.floor(size / 36)) },
  ];
}
