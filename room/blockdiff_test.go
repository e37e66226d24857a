package room

import (
	"encoding/json"
	"strings"
	"testing"
)

// spell is the old and new texts a word diff spells.
func spell(ws []WordChange) (old, new string) {
	var o, n strings.Builder
	for _, w := range ws {
		if w.Op != WordAdded {
			o.WriteString(w.Text)
		}
		if w.Op != WordRemoved {
			n.WriteString(w.Text)
		}
	}
	return o.String(), n.String()
}

func TestDiffBlocks(t *testing.T) {
	before := "# Plan\n\n## Goals\n\nShip the fast path first.\n\nKeep this.\n\n## Risks\n\nGone soon.\n"
	after := "# Plan\n\n## Goals\n\nShip the slow path first.\n\nKeep this.\n\nA new line.\n\n## Risks\n"
	got := DiffBlocks(before, after)
	js, _ := json.Marshal(got)
	want := `[{"op":"same","text":"# Plan"},{"op":"same","text":"## Goals"},` +
		`{"op":"changed","heading":"Goals","old":"Ship the fast path first.","new":"Ship the slow path first.",` +
		`"words":[{"op":"same","text":"Ship the "},{"op":"removed","text":"fast"},{"op":"added","text":"slow"},{"op":"same","text":" path first."}]},` +
		`{"op":"same","text":"Keep this."},{"op":"added","heading":"Goals","text":"A new line."},{"op":"same","text":"## Risks"},` +
		`{"op":"removed","heading":"Risks","text":"Gone soon."}]`
	if string(js) != want {
		t.Fatalf("diff\n%s\nwant\n%s", js, want)
	}
}

func TestDiffBlocksSameText(t *testing.T) {
	text := "# Plan\n\nOne.\n\nTwo.\n"
	for _, b := range DiffBlocks(text, text) {
		if b.Op != BlockSame {
			t.Fatalf("the same text diffs as %+v", b)
		}
	}
	if got := DiffBlocks("", "# New\n"); len(got) != 1 || got[0].Op != BlockAdded || got[0].Heading != "New" {
		t.Fatalf("an empty text's diff to one heading: %+v", got)
	}
}

// TestDiffBlocksWordsSpellBothSides: every changed block's words spell its
// old and new text, on texts of many kinds, and every block of both texts
// is shown once.
func TestDiffBlocksWordsSpellBothSides(t *testing.T) {
	pairs := [][2]string{
		{"a b c\n", "a x c\n"},
		{"Ünïcödé wörds 漢字 here.\n\nAnd 👍🏽 too.\n", "Ünïcödé words 漢字字 here.\n\nAnd 👍 too!\n"},
		{"- one\n- two\n\n```go\nx := 1\n```\n", "- one\n- three\n\n```go\nx := 2\n```\n"},
		{"para one\nline two\n", "para one changed\nline two\n\npara two\n"},
	}
	for _, p := range pairs {
		var olds, news []string
		for _, b := range DiffBlocks(p[0], p[1]) {
			switch b.Op {
			case BlockSame:
				olds, news = append(olds, b.Text), append(news, b.Text)
			case BlockChanged:
				o, n := spell(b.Words)
				if o != b.Old || n != b.New {
					t.Fatalf("%q → %q: words %+v spell %q → %q, not %q → %q", p[0], p[1], b.Words, o, n, b.Old, b.New)
				}
				olds, news = append(olds, b.Old), append(news, b.New)
			case BlockRemoved:
				olds = append(olds, b.Text)
			case BlockAdded:
				news = append(news, b.Text)
			}
		}
		for side, texts := range map[string][]string{p[0]: olds, p[1]: news} {
			var want []string
			for _, b := range Blocks(side) {
				want = append(want, BlockSource(side, b))
			}
			if strings.Join(texts, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("the diff shows blocks %q of %q, want %q", texts, side, want)
			}
		}
	}
}

// TestDiffBlocksLongBlockIsWhole: a block past the word bound is one whole
// change, not compared word by word.
func TestDiffBlocksLongBlockIsWhole(t *testing.T) {
	long := strings.Repeat("word ", blockDiffWordBytes/5+10)
	before, after := long+"one\n", long+"two\n"
	got := DiffBlocks(before, after)
	if len(got) != 1 || got[0].Op != BlockChanged {
		t.Fatalf("diff %+v", got)
	}
	w := got[0].Words
	if len(w) != 2 || w[0].Op != WordRemoved || w[1].Op != WordAdded || w[0].Text != got[0].Old || w[1].Text != got[0].New {
		t.Fatalf("a block past the bound has words %d long, not one removal and one addition", len(w))
	}
}

// TestTextHeadings: the headings found in one pass are headingAbove's for
// every block, setext headings and closing #s included.
func TestTextHeadings(t *testing.T) {
	text := "Intro.\n\n# One #\n\nA.\n\nTwo\n===\n\n- b\n- c\n\n## Three ##\n\n```\n# not a heading\n```\n\nD.\n"
	blocks := Blocks(text)
	got := textHeadings(text, blocks)
	for i := range blocks {
		if want := headingAbove(text, blocks, i); got[i] != want {
			t.Errorf("block %d: heading %q, want %q", i, got[i], want)
		}
	}
	if strings.Join(got, "|") != "|One|One|Two|Two|Three|Three|Three" {
		t.Errorf("headings %q", got)
	}
}
