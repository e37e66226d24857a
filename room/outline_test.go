package room

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// referenceParser is goldmark as it comes: the parser Blocks used before its
// view and its own link reference transformer.
var referenceParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithParagraphTransformers(util.Prioritized(extension.NewTableParagraphTransformer(), 200)),
	)
})

// referenceBlocks is the outline goldmark gives the source as it is.
func referenceBlocks(source string) []Block {
	doc := referenceParser().Parse(text.NewReader([]byte(source)))
	return blocksOf(source, doc, splitLines(source).lineAt)
}

// outlineTree is the tree goldmark builds for an outline of source.
func outlineTree(source string) ast.Node {
	return blockParser().Parse(text.NewReader(newOutlineView(source).text))
}

func treeDepth(n ast.Node) int {
	d := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		d = max(d, treeDepth(c))
	}
	return d + 1
}

// maxTreeDepth is the deepest tree an outline may build: the document, a
// list and its item for each level of indentation read (two columns each)
// and for each marker read, and a leaf.
const maxTreeDepth = 1 + 2*(MaxOutlineIndent/2+MaxOutlineDepth) + 1

// checkOutline checks what every outline holds: blocks in order, disjoint,
// on the source's lines, starting and ending on non-blank lines, each
// with its index and the digest of its source.
func checkOutline(t testing.TB, source string, blocks []Block) {
	t.Helper()
	ls := splitLines(source)
	prevEnd := 0
	for i, b := range blocks {
		switch {
		case b.Index != i:
			t.Fatalf("block %d has index %d", i, b.Index)
		case b.StartLine <= prevEnd || b.EndLine < b.StartLine || b.EndLine > ls.count():
			t.Fatalf("block %d spans %d-%d after a block ending on %d, in %d lines", i, b.StartLine, b.EndLine, prevEnd, ls.count())
		case isBlank(ls.line(b.StartLine)) || isBlank(ls.line(b.EndLine)):
			t.Fatalf("block %d (%d-%d) starts or ends on a blank line", i, b.StartLine, b.EndLine)
		case b.Digest != Digest(BlockSource(source, b)):
			t.Fatalf("block %d has digest %s, not its source's", i, b.Digest)
		}
		prevEnd = b.EndLine
	}
}

// The outline of each pathological plan is produced and is what CommonMark
// makes of it; how long each takes is BenchmarkOutline's.
func TestOutlineOfPathologicalPlans(t *testing.T) {
	want := map[string]string{
		"plain":                 "3591 blocks, first paragraph 1-1",
		"quotes":                "1 blocks, first blockquote 1-1",
		"quotes-spaced":         "1 blocks, first blockquote 1-1",
		"bullets":               "1 blocks, first list 1-1",
		"ordered":               "1 blocks, first list 1-1",
		"quotes-and-lists":      "1 blocks, first blockquote 1-1",
		"quote-stairs":          "1 blocks, first blockquote 1-720",
		"list-stairs":           "1 blocks, first list 1-510",
		"long-list-item":        "1 blocks, first list 1-65536",
		"deep-list-blank-lines": "1 blocks, first list 1-221737",
		"deep-list-lazy-lines":  "1 blocks, first list 1-110972",
		"brackets":              "1 blocks, first paragraph 1-1",
		"links":                 "1 blocks, first paragraph 1-1",
		"emphasis":              "1 blocks, first paragraph 1-1",
		"emphasis-mixed":        "1 blocks, first paragraph 1-1",
		"backticks":             "1 blocks, first code 1-1",
		"tildes":                "1 blocks, first code 1-1",
		"angles":                "1 blocks, first paragraph 1-1",
		"hashes":                "1 blocks, first paragraph 1-1",
		"fences":                "32768 blocks, first code 1-2",
		"html":                  "1 blocks, first html 1-43690",
		"table-wide":            "1 blocks, first table 1-3",
		"table-long":            "1 blocks, first table 1-26214",
		"definitions":           "32768 blocks, first definition 1-1",
		"definitions-titles":    "13107 blocks, first definition 1-4",
		"setext":                "65536 blocks, first heading 1-2",
		"callouts-open":         "23831 blocks, first component 1-1",
		"tags-open":             "23831 blocks, first component 1-1",
	}
	for _, p := range pathologicalPlans(MaxSourceBytes) {
		t.Run(p.name, func(t *testing.T) {
			if len(p.source) > MaxSourceBytes {
				t.Fatalf("%d bytes, over MaxSourceBytes", len(p.source))
			}
			blocks := Blocks(p.source)
			checkOutline(t, p.source, blocks)
			got := fmt.Sprintf("%d blocks, first %s %d-%d", len(blocks), blocks[0].Type, blocks[0].StartLine, blocks[0].EndLine)
			if got != want[p.name] {
				t.Errorf("got %s, want %s", got, want[p.name])
			}
		})
	}
}

// goldmark builds no tree deeper than the bounds allow: a line of 40,000
// ">" was 40,000 nested block quotes, each costing a count from the start
// of the line.
func TestOutlineNestingIsBounded(t *testing.T) {
	for _, p := range append(pathologicalPlans(MaxSourceBytes),
		corpusPlan{"issue: 40,000 >", strings.Repeat(">", 40000) + "\n"},
		corpusPlan{"tabs", strings.Repeat(">\t-\t", 10000) + "\n"},
		corpusPlan{"indented by tabs", linesTo(MaxSourceBytes, func(i int) string { return strings.Repeat("\t", i) + "- a" })},
	) {
		t.Run(p.name, func(t *testing.T) {
			if d := treeDepth(outlineTree(p.source)); d > maxTreeDepth {
				t.Errorf("a tree %d deep, over %d", d, maxTreeDepth)
			}
		})
	}
}

// Memory in proportion to the plan: goldmark recorded every blank line once
// for each list it was inside, so 200 nested lists and 200,000 blank lines
// took over a gigabyte.
func TestOutlineMemoryIsLinear(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector's allocations swamp the count: run without -race (go test ./room)")
	}
	for _, p := range pathologicalPlans(MaxSourceBytes) {
		t.Run(p.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			parseBlocks(p.source)
			runtime.ReadMemStats(&after)
			// The plain plan takes about 40 bytes for each of its own; the
			// plans of many blocks a few hundred, their digests and nodes.
			if perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(p.source)); perByte > 1000 {
				t.Errorf("%.0f bytes allocated for each byte of the plan", perByte)
			}
		})
	}
}

// Below the bounds the outline is exactly goldmark's: dropping repeated
// blank lines changes nothing, nor does the linear reading of link
// reference definitions.
func TestOutlineMatchesGoldmark(t *testing.T) {
	sources := []string{
		"- a\n\n\n\n  b\n",
		"-\n\n\n  foo\n",
		"-\n\n  foo\n",
		"1.\n\n\n2. b\n",
		"```\na\n\n\n\nb\n```\n",
		"- ```\n  a\n\n\n  b\n  ```\n",
		"    code\n\n\n\n    more\n\ntext\n",
		"<div>\n\n\n</div>\n",
		"<!--\n\n\n-->\n",
		"> a\n\n\n> b\n",
		"- a\n \t \n  \t\n  b\n",
		"- a\n\r\n\r\n  b\n",
		"[a]: /u\n\"t\" [b]: /v\n",
		"[a]: /u\n\"t\" x\n[b]: /v\n",
		"[a\nb]: /u\n\"t\" [c]: /v\n",
		"[a]: /u\n(\n[b]: /v\n(\n",
		"[a]: /u\n[b]: /v\n===\n",
		"[a]: /u\n[b]: /v\n| x |\n| - |\n",
		"[a]: /u 'title\nmore' \n[b]: <> \"t\"\ntext\n[c]: /w\n",
		"[ ]: /u\n[a]:\n/u\n[b]: /v \"t\" x\n",
		"  [a]: /u\n   [b]: /v\n    [c]: /w\n",
		"> [a]: /u\n> [b]: /v\n",
		"- [a]: /u\n  [b]: /v\n\n  text\n",
		strings.Repeat("[a]: /u\n", 50) + "text\n",
		strings.Repeat("- ", MaxOutlineDepth) + "a\n",
		strings.Repeat("> ", MaxOutlineDepth) + "a\n",
		strings.Repeat("- ", 40) + "\n",
		strings.Repeat("* ", 40) + "\n",
		strings.Repeat("- ", MaxOutlineDepth) + "- - -\n",
		strings.Repeat("- ", MaxOutlineDepth) + "* * *\n",
		strings.Repeat(" ", MaxOutlineIndent) + "- a\n",
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		sources = append(sources, randomDocument(r, 1+r.IntN(30)))
	}
	for _, source := range sources {
		if newOutlineView(source).bounded {
			t.Errorf("%q: bounded, but it is within the bounds", source)
		}
		got, want := parseBlocks(source), referenceBlocks(source)
		if !slices.Equal(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", source, shapes(got), shapes(want))
		}
	}
}

// Past the bounds, the deeper marker is text and the indentation is cut;
// a thematic break is left whole.
func TestOutlineViewBounds(t *testing.T) {
	n := MaxOutlineDepth
	tests := []struct{ line, want string }{
		{strings.Repeat(">", n+5), strings.Repeat(">", n) + "x>>>>"},
		{strings.Repeat("> ", n+2), strings.Repeat("> ", n) + "x > "},
		{strings.Repeat("- ", n+1) + "a", strings.Repeat("- ", n) + "x a"},
		{strings.Repeat("12. ", n+1) + "a", strings.Repeat("12. ", n) + "12x a"},
		{strings.Repeat("> - ", n) + "> a", strings.Repeat("> - ", n/2) + "x - " + strings.Repeat("> - ", n/2-1) + "> a"},
		{strings.Repeat("- ", n+3), strings.Repeat("- ", n+3)}, // a thematic break
		{strings.Repeat("- ", n) + "- -", strings.Repeat("- ", n) + "- -"},
		{strings.Repeat(" ", 100) + "- a", strings.Repeat(" ", MaxOutlineIndent) + "- a"},
		{strings.Repeat("\t", 20) + "a", strings.Repeat(" ", MaxOutlineIndent) + "a"},
		{strings.Repeat("-\t", n+1) + "a", strings.Repeat("-\t", n) + "x\ta"},
		{strings.Repeat("-     ", n+1), strings.Repeat("-     ", n+1)}, // five spaces: code, not a marker
	}
	for _, tt := range tests {
		v := newOutlineView(tt.line + "\n")
		if got := strings.TrimSuffix(string(v.text), "\n"); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.line, got, tt.want)
		}
		if v.bounded != (tt.line != tt.want) {
			t.Errorf("%q: bounded = %v", tt.line, v.bounded)
		}
	}
	v := newOutlineView("a\n\n \n\t\nb\n\n")
	if string(v.text) != "a\n\nb\n\n" || fmt.Sprint(v.line) != "[1 2 5 6]" {
		t.Errorf("blank lines: %q, lines %v", v.text, v.line)
	}
}

// MDX components opened and never closed stay as parsed; searching for
// each one's end took the square of their count.
func TestComponentsLeftOpen(t *testing.T) {
	source := strings.Repeat("<Callout>\n\n", 3) + "<Tabs>\n\nx\n\n</Tabs>\n\n<Callout>\n\ny\n\n</Callout>\n"
	want := []shape{{"component", 1, 1}, {"component", 3, 3}, {"component", 5, 5}, {"component", 7, 11}, {"component", 13, 17}}
	if got := shapes(Blocks(source)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	// A tag inside another component's attribute is its text.
	source = "<Tab title=\"<Callout>\">\n\n</Tab>\n\n<Callout>\n\nz\n\n</Callout>\n"
	want = []shape{{"component", 1, 3}, {"component", 5, 9}}
	if got := shapes(Blocks(source)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// One parse per text, however many readers ask, at once or one after
// another; each gets an outline of its own to keep.
func TestOutlineParsedOncePerText(t *testing.T) {
	source := fmt.Sprintf("# Shared %p\n\n%s", t, strings.Repeat(">", 40000))
	before := outlineCache.parseCount()
	var wg sync.WaitGroup
	outlines := make([][]Block, 8)
	for i := range outlines {
		wg.Go(func() { outlines[i] = Blocks(source) })
	}
	wg.Wait()
	for range 3 {
		Blocks(source)
	}
	if n := outlineCache.parseCount() - before; n != 1 {
		t.Errorf("parsed %d times", n)
	}
	outlines[0][0].Type = "changed by its reader"
	if Blocks(source)[0].Type != BlockHeading {
		t.Error("a reader's change to its outline reached another reader")
	}
}

// Every reader of a room's revision shares that parse: the room's members
// and GET /plan (Plan), the Planner's read tools (View, ReadPlan), comment
// anchoring and placing a decision card.
func TestOutlineSharedByEveryReader(t *testing.T) {
	source := fmt.Sprintf("# Plan %p\n\n%s\n\nUse Postgres.\n", t, strings.Repeat("> ", 20000))
	r, _ := newCommentRoom(t, source)
	before := outlineCache.parseCount()
	plan := r.Plan()
	view := r.View()
	if _, err := ReadPlan(PlanView{Source: plan.Source}, ReadPlanArgs{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartThread(context.Background(), Identity{Login: "ada", CanEdit: true}, threadOn(r, "Postgres", "why?")); err != nil {
		t.Fatal(err)
	}
	InsertDecisionMarks(plan.Source, 0, []string{"d1"})
	if n := outlineCache.parseCount() - before; n != 0 {
		t.Errorf("the readers parsed the plan %d more times", n)
	}
	if !slices.Equal(plan.Blocks, view.Blocks) || len(plan.Blocks) != 3 {
		t.Errorf("outlines differ: %v and %v", shapes(plan.Blocks), shapes(view.Blocks))
	}
}
