package room

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// outlineSeeds are the fuzz targets' first inputs: the pathological plans
// (small), and the odd corners of link reference definitions and blank
// lines.
func outlineSeeds() []string {
	var seeds []string
	for _, p := range pathologicalPlans(2048) {
		seeds = append(seeds, p.source)
	}
	return append(seeds,
		"[a]: /u\n\"t\" [b]: /v\n", "[a\nb]: /u\n\"t\" [c]: /v\n", "[a]: /u\n(\n[b]: /v\n(\n",
		"- a\n\n\n  b\n", "-\n\n\n  foo\n", "```\na\n\n\nb\n```\n", "<div>\n\n\n</div>\n",
		strings.Repeat("- ", MaxOutlineDepth+2)+"\n", strings.Repeat("> - ", MaxOutlineDepth)+"a\n",
		"<Callout>\n\n<Callout>\n\nx\n\n</Callout>\n",
	)
}

// FuzzOutline: any text has an outline whose blocks are in order, disjoint,
// on non-blank lines, cover every non-blank line and carry their sources'
// digests; the cached outline is the parsed one; and a text within the
// nesting bounds has exactly the outline goldmark alone gives it.
func FuzzOutline(f *testing.F) {
	for _, s := range outlineSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, source string) {
		if len(source) > MaxSourceBytes {
			return
		}
		blocks := Blocks(source)
		checkOutline(t, source, blocks)
		ls := splitLines(source)
		covered := 0
		for _, b := range blocks {
			for n := covered + 1; n < b.StartLine; n++ {
				if !blankLine(ls.line(n)) {
					t.Fatalf("line %d %q is in no block", n, ls.line(n))
				}
			}
			covered = b.EndLine
		}
		for n := covered + 1; n <= ls.count(); n++ {
			if !blankLine(ls.line(n)) {
				t.Fatalf("line %d %q is in no block", n, ls.line(n))
			}
		}
		if parsed := parseBlocks(source); !slices.Equal(blocks, parsed) {
			t.Fatalf("cached %v, parsed %v", shapes(blocks), shapes(parsed))
		}
		// goldmark alone is slow on some texts: compare only small ones.
		if len(source) <= 4096 && !newOutlineView(source).bounded {
			if want := referenceBlocks(source); !slices.Equal(blocks, want) {
				t.Fatalf("outline %v, goldmark's %v", shapes(blocks), shapes(want))
			}
		}
	})
}

// FuzzReadPlan: read_plan on any text from any place either refuses the
// arguments as invalid or pages to the end of the document: the pages'
// texts follow each other to its last byte, each page fits one result, and
// from the first line every block is listed once, in order.
func FuzzReadPlan(f *testing.F) {
	for _, s := range outlineSeeds() {
		f.Add(s, 0, 0, 0)
	}
	f.Add(strings.Repeat("é", 20000)+"\n\nx\n", 1, 0, 9000)
	f.Add(strings.Repeat("a\n", 3000), 5, 7, 0)
	f.Fuzz(func(t *testing.T, source string, offset, limit, column int) {
		if len(source) > MaxSourceBytes {
			return
		}
		view := PlanView{Title: "Plan", URL: "/documents/o/r/plan", Revision: 1, Source: source}
		args := ReadPlanArgs{Offset: offset, Limit: limit, Column: column}
		from, err := readStart(splitLines(source), args)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.Code != CodeInvalidArgument {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		var text strings.Builder
		var listed []Block
		for pages := 0; ; pages++ {
			if pages > len(source)+1 {
				t.Fatalf("%d pages and not at the end", pages)
			}
			page, err := ReadPlan(view, args)
			if err != nil {
				t.Fatalf("page %d (%+v): %v", pages, args, err)
			}
			if n := len(page.Text()); n > ReadBudget {
				t.Fatalf("page %d (%+v) is %d bytes, over %d", pages, args, n, ReadBudget)
			}
			text.WriteString(page.Source)
			listed = append(listed, page.Outline...)
			if page.Next == nil {
				break
			}
			args = *page.Next
		}
		if text.String() != source[from:] {
			t.Fatalf("the pages hold %q, not %q", text.String(), source[from:])
		}
		if from == 0 && !slices.Equal(listed, Blocks(source)) {
			t.Fatalf("the pages list %v, not %v", shapes(listed), shapes(Blocks(source)))
		}
	})
}
