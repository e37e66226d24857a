package room

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// historyOf is changes, made on base in turn, as a revert reads them.
func historyOf(t testing.TB, base string, changes ...ChangeSet) []HistoryChange {
	t.Helper()
	out := make([]HistoryChange, len(changes))
	for i, cs := range changes {
		js, err := cs.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = HistoryChange{Version: int64(i + 1), Changes: json.RawMessage(js)}
	}
	return out
}

// TestRevertLineBreaks: a later insertion right at the edge of the text a
// change wrote is in the way on the same line, not across a line break.
func TestRevertLineBreaks(t *testing.T) {
	base := "# T\n\nOne.\n"
	wrote := DiffChangeSet(base, "# T\n\nOne.\nTwo.\n") // "Two.\n" after "One.\n"
	for _, c := range []struct {
		name, after string
		inTheWay    bool
		want        string
	}{
		{"a new line after it", "# T\n\nOne.\nTwo.\nThree.\n", false, "# T\n\nOne.\nThree.\n"},
		{"a new line before it", "# T\n\nOne.\nZero.\nTwo.\n", false, "# T\n\nOne.\nZero.\n"},
		{"typing on at its end", "# T\n\nOne.\nTwo.!\n", true, ""},
		{"typing inside it", "# T\n\nOne.\nTw-o.\n", true, ""},
		{"typing just before it, on its line", "# T\n\nOne.\n>Two.\n", true, ""},
		{"an edit elsewhere", "# T!\n\nOne.\nTwo.\n", false, "# T!\n\nOne.\n"},
	} {
		now := "# T\n\nOne.\nTwo.\n"
		later := DiffChangeSet(now, c.after)
		if c.name == "typing just before it, on its line" {
			later = mustChangeSet(t, fmt.Sprintf(`[10,[0,">"],5]`))
		}
		cs, conflicts, err := RevertChanges(base, historyOf(t, base, wrote, later), func(h HistoryChange) bool { return h.Version == 1 })
		if err != nil {
			t.Fatal(err)
		}
		if (len(conflicts) > 0) != c.inTheWay {
			t.Errorf("%s: conflicts %+v", c.name, conflicts)
			continue
		}
		if c.inTheWay {
			if conflicts[0].Version != 2 {
				t.Errorf("%s: conflict %+v", c.name, conflicts[0])
			}
			continue
		}
		got, err := cs.Apply(c.after)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func mustChangeSet(t testing.TB, js string) ChangeSet {
	t.Helper()
	cs, err := ParseChangeSet([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestRevertConflictMessage: the refusal names each author once, with
// their revisions, in plain words.
func TestRevertConflictMessage(t *testing.T) {
	who := Identity{Login: "ada", Name: "Ada"}
	cs := []RevertConflict{
		{Version: 16, Author: Author{Kind: AuthorPerson, Name: "ada"}},
		{Version: 19, Author: Author{Kind: AuthorPlanner, Turn: "t"}},
		{Version: 21, Author: Author{Kind: AuthorPerson, Name: "ada"}},
		{Version: 22, Author: Author{Kind: AuthorMCP, Name: "codex"}},
	}
	want := "Revision 14 cannot be undone cleanly: later changes by Ada (revisions 16 and 21), the Planner (revision 19) and the MCP client codex (revision 22) edit the same text. Restore an earlier version instead, or edit by hand."
	if got := RevertConflictMessage("Revision 14", cs, who); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	want = "Revision 14 cannot be undone cleanly: a later change by the Planner (revision 19) edits the same text. Restore an earlier version instead, or edit by hand."
	if got := RevertConflictMessage("Revision 14", cs[1:2], who); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// A burst of typing in the way is one range, not a list of numbers.
	var burst []RevertConflict
	for v := int64(167); v <= 192; v++ {
		burst = append(burst, RevertConflict{Version: v, Author: Author{Kind: AuthorPerson, Name: "ada"}})
	}
	burst = append(burst, RevertConflict{Version: 195, Author: Author{Kind: AuthorPerson, Name: "ada"}})
	want = "Revision 14 cannot be undone cleanly: later changes by Ada (revisions 167–192 and 195) edit the same text. Restore an earlier version instead, or edit by hand."
	if got := RevertConflictMessage("Revision 14", burst, who); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	for _, c := range []struct {
		vs   []int64
		want string
	}{
		{[]int64{12}, "revision 12"},
		{[]int64{12, 13, 14, 15}, "revisions 12–15"},
		{[]int64{12, 14, 15}, "revisions 12 and 14–15"},
		{[]int64{2, 3, 5, 9, 10, 11}, "revisions 2–3, 5 and 9–11"},
	} {
		if got := Revisions(c.vs); got != c.want {
			t.Errorf("Revisions(%v) = %q, want %q", c.vs, got, c.want)
		}
	}
}

// BenchmarkRevertChanges is the revert of a change with n later changes
// after it, on a plan of about 250 KB: what POST …/versions/:v/revert
// works out before it applies one change.
func BenchmarkRevertChanges(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n, "-later"), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			base := strings.Repeat("A paragraph of the plan, with some words in it.\n\n", 5000)
			text := base
			changes := make([]ChangeSet, 0, n+1)
			for i := 0; i <= n; i++ {
				pos := rng.IntN(len(text))
				var cs ChangeSet
				if pos > 0 {
					cs.add(section{len: pos, kept: true})
				}
				cs.add(section{insert: fmt.Sprint("w", i, " ")})
				if rest := len(text) - pos; rest > 0 {
					cs.add(section{len: rest, kept: true})
				}
				changes = append(changes, cs)
				text, _ = cs.Apply(text)
			}
			hs := historyOf(b, base, changes...)
			b.ResetTimer()
			for range b.N {
				if _, _, err := RevertChanges(base, hs, func(h HistoryChange) bool { return h.Version == 1 }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// revertEdit is one replacement on a plain string, in UTF-16 units.
type revertEdit struct {
	pos, del int
	ins      string
}

// revertHistory is the history of edits applied to base, from version 1.
func revertHistory(t *testing.T, base string, edits []revertEdit) ([]HistoryChange, string) {
	t.Helper()
	text := base
	var hs []HistoryChange
	for i, e := range edits {
		n := UTF16Len(text)
		var c ChangeSet
		if e.pos > 0 {
			c.add(section{len: e.pos, kept: true})
		}
		c.add(section{len: e.del, insert: e.ins})
		if rest := n - e.pos - e.del; rest > 0 {
			c.add(section{len: rest, kept: true})
		}
		next, err := c.Apply(text)
		if err != nil {
			t.Fatal(err)
		}
		text = next
		js, _ := c.MarshalJSON()
		hs = append(hs, HistoryChange{Version: int64(i + 1), Author: Author{Kind: AuthorPerson, Name: fmt.Sprint("p", i+1)}, Changes: js})
	}
	return hs, text
}

// TestRevertChanges: the inverse of one change, or of several, mapped
// through what follows; refused, naming the later change and where it is
// now, when a later change touches what a reverted one wrote or where it
// deleted.
func TestRevertChanges(t *testing.T) {
	base := "one two three\n"
	for _, tc := range []struct {
		name      string
		edits     []revertEdit
		reverted  []int64
		want      string
		conflicts string
	}{
		{"insertion", []revertEdit{{4, 0, "and "}}, []int64{1}, base, ""},
		{"deletion", []revertEdit{{3, 4, ""}}, []int64{1}, base, ""},
		{"later edit after", []revertEdit{{0, 3, "ONE"}, {8, 5, "3"}}, []int64{1}, "one two 3\n", ""},
		{"later edit before", []revertEdit{{8, 5, "3"}, {0, 3, "1"}}, []int64{1}, "1 two three\n", ""},
		{"later edit inside", []revertEdit{{4, 0, "big "}, {5, 1, "I"}}, []int64{1}, "", "[{2 5 6}]"},
		{"later edit touching the end", []revertEdit{{4, 0, "big "}, {8, 0, "!"}}, []int64{1}, "", "[{2 8 9}]"},
		{"later edit at a deletion", []revertEdit{{3, 4, ""}, {3, 0, "x"}, {0, 1, "O"}}, []int64{1}, "", "[{2 3 4}]"},
		{"emoji", []revertEdit{{0, 0, "😀 "}, {6, 0, "é"}}, []int64{1}, "oneé two three\n", ""},
		{"turn with an edit between", []revertEdit{{0, 0, "A "}, {9, 0, "b"}, {2, 3, "ONE"}}, []int64{1, 3}, "one twob three\n", ""},
		{"turn editing its own text", []revertEdit{{0, 0, "AB "}, {1, 1, "c"}, {11, 5, "3"}}, []int64{1, 2}, "one two 3\n", ""},
		{"turn overlapped between", []revertEdit{{0, 0, "A "}, {0, 0, "z"}, {10, 0, "q"}}, []int64{1, 3}, "", "[{2 0 1}]"},
		// The conflict is placed in the current text: carried through the
		// turn's own change after it too ("0123" moves Ada's "Z" on by 4).
		{"turn overlapped, then moved by the turn", []revertEdit{{3, 0, "XY"}, {5, 0, "Z"}, {0, 0, "0123"}}, []int64{1, 3}, "", "[{2 9 10}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, now := revertHistory(t, base, tc.edits)
			c, conflicts, err := RevertChanges(base, hs[tc.reverted[0]-1:], func(h HistoryChange) bool { return slices.Contains(tc.reverted, h.Version) })
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range conflicts {
				got = append(got, fmt.Sprintf("{%d %d %d}", k.Version, k.From, k.To))
			}
			if tc.conflicts != "" {
				if "["+strings.Join(got, " ")+"]" != tc.conflicts {
					t.Fatalf("conflicts %v, want %s", got, tc.conflicts)
				}
				return
			}
			if len(conflicts) > 0 {
				t.Fatalf("conflicts %v", got)
			}
			text, err := c.Apply(now)
			if err != nil || text != tc.want {
				t.Fatalf("reverted %q (%v), want %q", text, err, tc.want)
			}
		})
	}
}

// The versions list's description states its paging; it must say what the
// constants do.
func TestVersionsListedStatesThePaging(t *testing.T) {
	if want := fmt.Sprintf("%d at a time (limit: 1 to %d)", VersionsPage, MaxVersionsPage); !strings.Contains(VersionsListed, want) {
		t.Errorf("VersionsListed does not say %q: %s", want, VersionsListed)
	}
}
