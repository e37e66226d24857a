package room

// The pathological plans: Markdown that made goldmark, or the outline's own
// steps, cost time or memory out of proportion to its length. The tests,
// benchmarks and fuzz seeds of the outline share them. ui/tests/corpus.mjs
// holds the browser's.

import (
	"strings"
)

type corpusPlan struct {
	name   string
	source string
}

// repeatTo repeats unit until the text would pass size bytes.
func repeatTo(unit string, size int) string {
	return strings.Repeat(unit, max(size/len(unit), 1))
}

// linesTo joins line(i) for i = 0, 1, ... until the text would pass size.
func linesTo(size int, line func(i int) string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		l := line(i) + "\n"
		if b.Len()+len(l) > size {
			break
		}
		b.WriteString(l)
	}
	if b.Len() == 0 {
		return line(0) + "\n"
	}
	return b.String()
}

// pathologicalPlans are plans of at most size bytes, a plain one first as
// the baseline the others are measured against.
func pathologicalPlans(size int) []corpusPlan {
	half := size / 2
	// A list nested as deep as a quarter of size allows, at most 200.
	deep := func() string {
		var b strings.Builder
		for i := 0; i < 200 && b.Len()+2*i+4 <= size/4; i++ {
			b.WriteString(strings.Repeat("  ", i) + "- a\n")
		}
		return b.String()
	}()
	plans := []corpusPlan{
		{"plain", linesTo(size, func(i int) string {
			if i%2 == 1 {
				return ""
			}
			return "A plain paragraph of the plan, with **some** emphasis and a [link](/x)."
		})},
		// Nesting of every kind, on one line.
		{"quotes", strings.Repeat(">", size-1) + "\n"},
		{"quotes-spaced", repeatTo("> ", size-2) + "a\n"},
		{"bullets", repeatTo("- ", size-2) + "a\n"},
		{"ordered", repeatTo("1. ", size-2) + "a\n"},
		{"quotes-and-lists", repeatTo("> - 1) ", size-2) + "a\n"},
		// Nesting built up over lines.
		{"quote-stairs", linesTo(size, func(i int) string { return strings.Repeat(">", i+1) + " a" })},
		{"list-stairs", linesTo(size, func(i int) string { return strings.Repeat("  ", i) + "- a" })},
		{"long-list-item", "- a\n" + repeatTo("  b\n", size-4)},
		{"deep-list-blank-lines", deep + strings.Repeat("\n", max(size-len(deep)-8, 0)) + "  last\n"},
		{"deep-list-lazy-lines", deep + repeatTo("a\n", max(size-len(deep), 2))},
		// Long runs of delimiters.
		{"brackets", strings.Repeat("[", half-1) + strings.Repeat("]", half-1) + "\n"},
		{"links", strings.Repeat("[", size/6) + "a" + strings.Repeat("](b)", size/6) + "\n"},
		{"emphasis", strings.Repeat("*", half-1) + "a" + strings.Repeat("*", half-2) + "\n"},
		{"emphasis-mixed", repeatTo("*_", half-1) + "a" + repeatTo("_*", half-2) + "\n"},
		{"backticks", strings.Repeat("`", size-1) + "\n"},
		{"tildes", strings.Repeat("~", size-1) + "\n"},
		{"angles", strings.Repeat("<", size-1) + "\n"},
		{"hashes", strings.Repeat("#", size-1) + "\n"},
		{"fences", repeatTo("```\n", size)},
		{"html", repeatTo("<div>\n", size)},
		// Huge tables.
		{"table-wide", strings.Repeat("|a", size/6-1) + "|\n" + strings.Repeat("|-", size/6-1) + "|\n" + strings.Repeat("|b", size/6-1) + "|\n"},
		{"table-long", "| a | b |\n| - | - |\n" + repeatTo("| c | d |\n", size-20)},
		// Link reference definitions, many in one paragraph.
		{"definitions", repeatTo("[a]: /u\n", size)},
		{"definitions-titles", repeatTo("[a]: /u\n(\n", size)},
		{"setext", repeatTo("a\n=\n", size)},
		// MDX components opened and never closed.
		{"callouts-open", repeatTo("<Callout>\n\n", size)},
		{"tags-open", repeatTo("<A1 <A2 x\n\n", size)},
	}
	return plans
}
