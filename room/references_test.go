package room

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestObservePassage: a passage over two blocks keeps both blocks' digests,
// its ends inside them, its quote on one line, its lines and the heading
// above it, counting UTF-16 as CodeMirror does.
func TestObservePassage(t *testing.T) {
	src := "# Plan\n\n## Goals 🚀\n\nShip 🚀 the beta.\n\n- ten teams\n- then ask\n"
	from := UTF16Len(src[:strings.Index(src, "the beta")])
	to := UTF16Len(src[:strings.Index(src, "- then")])
	p, err := observePassage(src, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if p.Quote != "the beta. - ten teams" || p.StartLine != 5 || p.EndLine != 7 || p.Heading != "Goals 🚀" ||
		len(p.Blocks) != 2 || p.Blocks[0] != (BlockRef{2, Digest("Ship 🚀 the beta.")}) || p.Blocks[1] != (BlockRef{3, Digest("- ten teams\n- then ask")}) ||
		p.InFirst != UTF16Len("Ship 🚀 ") || p.InLast != UTF16Len("- ten teams\n") || p.Digest != Digest("the beta.\n\n- ten teams\n") {
		t.Fatalf("observed %+v", p)
	}
	for _, bad := range [][2]int{{-1, 3}, {5, 5}, {0, UTF16Len(src) + 1}, {UTF16Len("# Plan\n"), UTF16Len("# Plan\n") + 1}} {
		if _, err := observePassage(src, bad[0], bad[1]); err == nil {
			t.Errorf("from %d to %d: no error", bad[0], bad[1])
		}
	}
	// Half a surrogate pair is no place to start.
	if _, err := observePassage(src, UTF16Len("# Plan\n\n## Goals ")+1, to); err == nil {
		t.Error("a passage starting inside 🚀: no error")
	}
}

// TestLocatePassageFallback: where the history does not reach from the
// passage's revision to now, the passage is found by its blocks' digests,
// then by its quote across line breaks, else orphaned; a step that does not
// follow the last one is a gap, not a change to map through.
func TestLocatePassageFallback(t *testing.T) {
	src := "# Plan\n\nShip the beta\nto ten teams.\n\nThen ask them.\n"
	from := UTF16Len(src[:strings.Index(src, "Ship")])
	to := UTF16Len(src[:strings.Index(src, "\n\nThen")])
	p, err := observePassage(src, from, to)
	if err != nil {
		t.Fatal(err)
	}
	moved := "# Plan\n\nIntro.\n\nShip the beta\nto ten teams.\n\nThen ask them.\n"
	gap := []PassageStep{{From: 4, To: 5, Changes: json.RawMessage(`[0]`)}}
	now := LocatePassage(p, 3, gap, moved, 5)
	if now.Found != FoundByBlock || now.State != AnchorExact || now.Text != "Ship the beta\nto ten teams." || now.StartLine != 5 || now.EndLine != 6 {
		t.Errorf("moved, history pruned: %+v", now)
	}
	// The block around it rewritten, its words wrapped anew: found by them.
	rewrapped := "# Plan\n\nFirst: Ship the beta to\nten teams.\n"
	now = LocatePassage(p, 3, nil, rewrapped, 9)
	if now.Found != FoundByQuote || now.State != AnchorChanged || now.Text != "Ship the beta to\nten teams." || now.Revision != 9 {
		t.Errorf("rewrapped, history pruned: %+v", now)
	}
	// Said twice, it is not guessed at.
	twice := rewrapped + "\nShip the beta to ten teams.\n"
	if now = LocatePassage(p, 3, nil, twice, 9); now.State != AnchorOrphaned || now.StartLine != 0 {
		t.Errorf("its words twice, history pruned: %+v", now)
	}
}
