package store

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// A title another document has becomes the next free one, counted in any
// letter case, and a number never takes a title over its limit.
func TestCreateChannelFreeTitle(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	long := strings.Repeat("é", MaxTitleLength)
	for _, c := range []struct{ ask, want, taken string }{
		{"Launch plan", "Launch plan", ""},
		{"Launch plan", "Launch plan 2", "Launch plan"},
		{"  LAUNCH PLAN ", "LAUNCH PLAN 3", "LAUNCH PLAN"},
		{"Launch plan 2", "Launch plan 2 2", "Launch plan 2"},
		{long, long, ""},
		{long, strings.Repeat("é", MaxTitleLength-2) + " 2", long},
	} {
		ch, taken, err := s.CreateChannelFreeTitle(ctx, r.NodeID, c.ask)
		if err != nil || ch.Title != c.want || taken != c.taken || utf8.RuneCountInString(ch.Title) > MaxTitleLength {
			t.Errorf("%q: %q (taken %q), %v; want %q (taken %q)", c.ask, ch.Title, taken, err, c.want, c.taken)
		}
	}
	if _, _, err := s.CreateChannelFreeTitle(ctx, r.NodeID, "\u200b"); errCode(err) != "invalid-title" {
		t.Errorf("an invisible title: %v", err)
	}
}
