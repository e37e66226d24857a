package room

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// shape is a block without its digest, which TestBlockDigest checks apart.
type shape struct {
	typ        string
	start, end int
}

func shapes(blocks []Block) []shape {
	out := []shape{}
	for i, b := range blocks {
		if b.Index != i {
			panic(fmt.Sprintf("block %d has index %d", i, b.Index))
		}
		out = append(out, shape{b.Type, b.StartLine, b.EndLine})
	}
	return out
}

func TestBlocks(t *testing.T) {
	tests := []struct {
		name   string
		source string
		want   []shape
	}{
		{"empty", "", nil},
		{"blank lines only", "\n  \n\t\n", nil},
		{"no final line break", "# Title\n\nText", []shape{{"heading", 1, 1}, {"paragraph", 3, 3}}},
		{"leading blank lines", "\n\n# Title\n", []shape{{"heading", 3, 3}}},
		{"paragraph lines", "one\ntwo\nthree\n\nfour\n", []shape{{"paragraph", 1, 3}, {"paragraph", 5, 5}}},
		{"setext heading", "Title\n=====\n\ntext\n", []shape{{"heading", 1, 2}, {"paragraph", 4, 4}}},
		{"empty ATX heading", "#\n\n---\n", []shape{{"heading", 1, 1}, {"thematic_break", 3, 3}}},
		{"heading interrupts paragraph", "text\n# H\n", []shape{{"paragraph", 1, 1}, {"heading", 2, 2}}},
		{"fenced code keeps its fences and blank lines",
			"```go\nfunc f() {\n\n}\n```\n\nafter\n", []shape{{"code", 1, 5}, {"paragraph", 7, 7}}},
		{"tilde fence", "~~~\nx\n~~~\n", []shape{{"code", 1, 3}}},
		{"unclosed fence runs to the end", "```\ncode\n\nmore\n\n", []shape{{"code", 1, 4}}},
		{"indented code", "    a\n\n    b\n\nc\n", []shape{{"code", 1, 3}, {"paragraph", 5, 5}}},
		{"loose list", "- a\n\n  more a\n- b\n\n  - nested\n\nafter\n", []shape{{"list", 1, 6}, {"paragraph", 8, 8}}},
		{"ordered list", "1. one\n2. two\n", []shape{{"list", 1, 2}}},
		{"blockquote with lazy line", "> quote\nlazy\n\n> other\n", []shape{{"blockquote", 1, 2}, {"blockquote", 4, 4}}},
		{"html block", "<div>\n<p>x</p>\n</div>\n\ntext\n", []shape{{"html", 1, 3}, {"paragraph", 5, 5}}},
		{"html comment with blank lines", "<!--\n\nnote\n\n-->\n", []shape{{"html", 1, 5}}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |\n\ntext\n", []shape{{"table", 1, 3}, {"paragraph", 5, 5}}},
		{"thematic break", "a\n\n***\n\nb\n", []shape{{"paragraph", 1, 1}, {"thematic_break", 3, 3}, {"paragraph", 5, 5}}},
		{"link reference definition", "[x]: /url\n\ntext [x]\n", []shape{{"definition", 1, 1}, {"paragraph", 3, 3}}},
		{"decision mark", "text\n\n<Decision id=\"d-1\" />\n\nmore\n", []shape{{"paragraph", 1, 1}, {"decision", 3, 3}, {"paragraph", 5, 5}}},
		{"callout with Markdown inside", "<Callout type=\"note\">\n\nBe **careful**.\n\n- a\n\n</Callout>\n\nafter\n",
			[]shape{{"component", 1, 7}, {"paragraph", 9, 9}}},
		{"tight callout", "<Callout type=\"tip\">\nshort\n</Callout>\n", []shape{{"component", 1, 3}}},
		{"tabs", "<Tabs>\n<Tab title=\"A\">\n\nfirst\n\n</Tab>\n<Tab title=\"B\">\n\nsecond\n\n</Tab>\n</Tabs>\n\nafter\n",
			[]shape{{"component", 1, 12}, {"paragraph", 14, 14}}},
		{"nested same component", "<Callout>\n\n<Callout>\n\ninner\n\n</Callout>\n\nouter\n\n</Callout>\n\nafter\n",
			[]shape{{"component", 1, 11}, {"paragraph", 13, 13}}},
		{"closing tag in a code sample closes nothing", "<Callout>\n\n```\n</Callout>\n```\n\n</Callout>\n",
			[]shape{{"component", 1, 7}}},
		{"'>' inside an attribute", "<Callout title=\"a > b\" data={x > 1}>\n\nbody\n\n</Callout>\n", []shape{{"component", 1, 5}}},
		{"self-closing component", "<Chart data=\"a\" />\n\ntext\n", []shape{{"component", 1, 1}, {"paragraph", 3, 3}}},
		{"unclosed component stays as parsed", "<Callout>\n\ntext\n", []shape{{"component", 1, 1}, {"paragraph", 3, 3}}},
		{"similar name does not close", "<Callout>\n\n</CalloutBox>\n\n</Callout>\n", []shape{{"component", 1, 5}}},
		{"lowercase tag is html", "<details>\n\nx\n\n</details>\n", []shape{{"html", 1, 1}, {"paragraph", 3, 3}, {"html", 5, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := shapes(Blocks(tt.source))
			if fmt.Sprint(got) != fmt.Sprint(shapesOrEmpty(tt.want)) {
				t.Errorf("Blocks(%q)\n got %v\nwant %v", tt.source, got, tt.want)
			}
		})
	}
}

func shapesOrEmpty(s []shape) []shape {
	if s == nil {
		return []shape{}
	}
	return s
}

func TestBlockDigest(t *testing.T) {
	source := "# Plan\n\n```\ncode\n```\n\n# Plan\n"
	blocks := Blocks(source)
	sum := sha256.Sum256([]byte("```\ncode\n```"))
	if want := "sha256:" + hex.EncodeToString(sum[:]); blocks[1].Digest != want {
		t.Errorf("digest of the code block = %s, want %s", blocks[1].Digest, want)
	}
	if blocks[0].Digest != blocks[2].Digest {
		t.Errorf("equal blocks have digests %s and %s", blocks[0].Digest, blocks[2].Digest)
	}
	if got := BlockSource(source, blocks[1]); got != "```\ncode\n```" {
		t.Errorf("BlockSource = %q", got)
	}
}

// TestBlocksPartitionLines checks, over random documents, the invariant
// edit_plan relies on: blocks are in order, do not overlap, start and end on
// non-blank lines, and every non-blank line belongs to exactly one block.
func TestBlocksPartitionLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		source := randomDocument(r, 1+r.IntN(40))
		ls := splitLines(source)
		owner := make([]int, ls.count()+1)
		for i := range owner {
			owner[i] = -1
		}
		prevEnd := 0
		for _, b := range Blocks(source) {
			if b.StartLine <= prevEnd || b.EndLine < b.StartLine {
				t.Fatalf("block %d spans %d-%d after a block ending on %d in\n%s", b.Index, b.StartLine, b.EndLine, prevEnd, source)
			}
			if isBlank(ls.line(b.StartLine)) || isBlank(ls.line(b.EndLine)) {
				t.Fatalf("block %d (%d-%d) starts or ends on a blank line in\n%s", b.Index, b.StartLine, b.EndLine, source)
			}
			for n := b.StartLine; n <= b.EndLine; n++ {
				owner[n] = b.Index
			}
			prevEnd = b.EndLine
		}
		for n := 1; n <= ls.count(); n++ {
			if owner[n] < 0 && !isBlank(ls.line(n)) {
				t.Fatalf("line %d %q belongs to no block in\n%s", n, ls.line(n), source)
			}
		}
	}
}

// randomDocument joins random blocks of the plan dialect, sometimes without
// the blank line between them, so blocks also meet in unusual ways.
func randomDocument(r *rand.Rand, blocks int) string {
	pieces := []string{
		"# Heading", "## Sub *heading*", "Title\n=====", "A paragraph\nof two lines.",
		"- a\n- b\n\n  more b\n  - nested", "1. one\n2. two", "> quote\nlazy line",
		"```go\nfunc f() {\n\n}\n```", "    indented code", "---", "| a | b |\n|---|---|\n| 1 | 2 |",
		"<div>\nhtml\n</div>", "<!--\n\ncomment\n\n-->", "[ref]: /url", "<Decision id=\"d1\" />",
		"<Callout type=\"note\">\n\n**Note** text\n\n</Callout>", "<Tabs>\n<Tab title=\"A\">\n\nx\n\n</Tab>\n</Tabs>",
		"<Chart />", "Ünïcödé 🚀 line", "```\nunclosed fence", "<Callout>\n\nunclosed component",
	}
	var b strings.Builder
	for i := 0; i < blocks; i++ {
		if i > 0 {
			b.WriteString([]string{"\n\n", "\n\n\n", "\n", "\n \n"}[r.IntN(4)])
		}
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	if r.IntN(2) == 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func TestDecisions(t *testing.T) {
	source := "<Decision id=\"a\" />\n\ntext <Decision id=\"inline\" /> here\n\n  <Decision id=\"b-2\"  />\n\n<Decision id='c' />\n"
	got := Decisions(source)
	want := []DecisionMark{{ID: "a", Line: 1}, {ID: "b-2", Line: 5}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Decisions = %v, want %v", got, want)
	}
}

func TestCheckReserved(t *testing.T) {
	const base = "# Plan\n\nText.\n\n<Decision id=\"a\" />\n\nMore.\n\n<Decision id=\"b\" />\n"
	tests := []struct {
		name   string
		after  string
		reason string // "" when the edit is allowed
	}{
		{"unchanged", base, ""},
		{"text around the cards changes", "# Plan v2\n\nNew text.\n\n<Decision id=\"a\" />\n\n<Decision id=\"b\" />\nTail.\n", ""},
		{"a card moves among the text", "# Plan\n\n<Decision id=\"a\" />\n\nText.\n\nMore.\n\n<Decision id=\"b\" />\n", ""},
		{"added", base + "\n<Decision id=\"c\" />\n", "This edit would add a decision card at line 11 (<Decision id=\"c\" />)."},
		{"added inline", strings.Replace(base, "Text.", "See <Decision id=\"c\" /> here.", 1), "would add a decision card at line 3"},
		{"added in a code sample", base + "\n```\n<Decision id=\"c\" />\n```\n", "would add a decision card at line 12"},
		{"removed", strings.Replace(base, "<Decision id=\"a\" />\n\n", "", 1), "This edit would remove the decision card on line 5 (<Decision id=\"a\" />)."},
		{"duplicated", base + "\n<Decision id=\"a\" />\n", "would duplicate a decision card at line 11"},
		{"id altered", strings.Replace(base, "id=\"b\"", "id=\"z\"", 1), "would alter a decision card at line 9"},
		{"spacing altered", strings.Replace(base, "<Decision id=\"b\" />", "<Decision id=\"b\"/>", 1), "would alter a decision card at line 9"},
		{"broken into text", strings.Replace(base, "<Decision id=\"b\" />", "<Decision id=\"b\"", 1), "would alter a decision card at line 9"},
		{"swapped", strings.NewReplacer("id=\"a\"", "id=\"b\"", "id=\"b\"", "id=\"a\"").Replace(base), "This edit would reorder the decision cards."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckReserved(base, tt.after)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("CheckReserved refused an allowed edit: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeReservedComponent {
				t.Fatalf("CheckReserved = %v, want a %s error", err, CodeReservedComponent)
			}
			if !strings.Contains(e.Message, tt.reason) || !strings.HasSuffix(e.Message, "leave every <Decision /> line exactly as it is and edit the text around it.") {
				t.Errorf("message %q\nwant it to contain %q and end with the advice", e.Message, tt.reason)
			}
		})
	}
}

func TestInsertDecisionMarks(t *testing.T) {
	const source = "# Plan\n\nText.\n- list right after\n"
	tests := []struct {
		name   string
		source string
		after  int
		ids    []string
		want   string
	}{
		{"after a block", source, 0, []string{"a"}, "# Plan\n\n<Decision id=\"a\" />\n\nText.\n- list right after\n"},
		{"between blocks with no blank line", source, 1, []string{"a", "b"},
			"# Plan\n\nText.\n\n<Decision id=\"a\" />\n\n<Decision id=\"b\" />\n\n- list right after\n"},
		{"after the last block", source, 2, []string{"a"}, source + "\n<Decision id=\"a\" />\n"},
		{"at the end", source, -1, []string{"a"}, source + "\n<Decision id=\"a\" />\n"},
		{"no such block: the end", source, 9, []string{"a"}, source + "\n<Decision id=\"a\" />\n"},
		{"no final line break", "Text.", -1, []string{"a"}, "Text.\n\n<Decision id=\"a\" />\n"},
		{"empty plan", "", -1, []string{"a"}, "<Decision id=\"a\" />\n"},
		{"no ids", source, 0, nil, source},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := InsertDecisionMarks(tt.source, tt.after, tt.ids)
			if got != tt.want {
				t.Fatalf("InsertDecisionMarks\n got %q\nwant %q", got, tt.want)
			}
			var ids []string
			for _, b := range Blocks(got) {
				if b.Type == BlockDecision {
					ids = append(ids, Decisions(BlockSource(got, b))[0].ID)
				}
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.ids) {
				t.Errorf("decision blocks hold %v, want %v", ids, tt.ids)
			}
		})
	}
	t.Run("an id that is not a mark id panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("no panic for id `a" + `" onload="x` + "`")
			}
		}()
		InsertDecisionMarks(source, 0, []string{`a" onload="x`})
	})
}

func TestBlocksFixture(t *testing.T) {
	source, err := os.ReadFile("testdata/plan.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range Blocks(string(source)) {
		got = append(got, fmt.Sprintf("%d %s %d-%d", b.Index, b.Type, b.StartLine, b.EndLine))
	}
	want := []string{
		"0 heading 1-1", "1 paragraph 3-4", "2 heading 6-6", "3 list 8-11", "4 component 13-17",
		"5 code 19-23", "6 decision 25-25", "7 table 27-30", "8 heading 32-32",
		"9 component 34-45", "10 blockquote 47-48",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Blocks(testdata/plan.md):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// largePlan is a plan of about n bytes made of the dialect's blocks.
func largePlan(n int) string {
	fixture, err := os.ReadFile("testdata/plan.md")
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	for b.Len()+len(fixture) <= n {
		b.Write(fixture)
		b.WriteString("\n")
	}
	return b.String()
}

// BenchmarkBlocks is the parse of a large plan's outline; Blocks keeps
// what it parsed, so the parse is called without the cache.
func BenchmarkBlocks(b *testing.B) {
	source := largePlan(MaxSourceBytes)
	b.SetBytes(int64(len(source)))
	for b.Loop() {
		parseBlocks(source)
	}
}

// CheckReserved reads only the changed lines; on every edit it must agree
// with the comparison of the whole texts' reserved lines, including edits
// that make or break a tag across the edge of what changed.
func TestCheckReservedAgreesWithWholeText(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 1))
	pieces := []string{"<Decision id=\"a\" />", "<Decision id=\"b\" />", "<", "Decision", " ", "\n", "\n\n", "text", "id=\"a\"", " />", "x<Decision"}
	random := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range 20000 {
		before := random(r.IntN(30))
		at, end := 0, 0
		if len(before) > 0 {
			at = r.IntN(len(before) + 1)
			end = at + r.IntN(len(before)-at+1)
		}
		ins := random(r.IntN(3))
		after := before[:at] + ins + before[end:]
		whole := equalLines(reservedLines(before), reservedLines(after))
		if got := CheckReserved(before, after) == nil; got != whole {
			t.Fatalf("edit %d: %q to %q: allowed %v, the whole texts say %v", i, before, after, got, whole)
		}
		// A push's check reads the span its change set touched, which may
		// be wider than what differs (a character replaced by itself).
		cs, err := ParseChangeSet(changeJSON(len(before), at, end-at, ins))
		if err != nil {
			t.Fatal(err)
		}
		text, span, err := cs.applyKnown(before, len(before))
		if err != nil || text != after {
			t.Fatalf("edit %d: applied %q, %v; want %q", i, text, err, after)
		}
		if got := checkReservedIn(before, after, span) == nil; got != whole {
			t.Fatalf("edit %d: %q to %q in %+v: allowed %v, the whole texts say %v", i, before, after, span, got, whole)
		}
	}
}
