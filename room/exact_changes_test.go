package room

// Change sets as exact as the edit: the Planner's edit_plan batch and a
// whole-plan replacement (an HTTP PUT, MCP's update_document) change only
// what they changed, so comment threads, the Planner's change marks and
// the tabs that rebase their own typing onto the change see exactly that.

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// exactRoom opens a document over an in-memory database with source as
// its plan and a tab that records every frame.
func exactRoom(t testing.TB, source string) (*Room, *memComments, *recConn) {
	t.Helper()
	mc := newMemComments()
	h, r, release := openCommentDoc(t, mc)
	t.Cleanup(release)
	if _, err := r.ReplaceText(context.Background(), r.Plan().Version, source); err != nil {
		t.Fatal(err)
	}
	tab := &recConn{}
	m, err := h.Join(context.Background(), Channel{ID: "doc", Title: "Plan"}, Identity{Login: "bo", Name: "Bo", CanEdit: true}, tab)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Leave)
	tab.take()
	return r, mc, tab
}

// startThreads opens a thread on the first occurrence of each quote and
// returns their ids by quote.
func startThreads(t testing.TB, r *Room, quotes ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, q := range quotes {
		th, err := r.StartThread(context.Background(), Identity{Login: "ada"}, threadOn(r, q, "About "+q))
		if err != nil {
			t.Fatalf("thread on %q: %v", q, err)
		}
		ids[q] = th.ID
	}
	return ids
}

// threadByID is the room's thread id, as members see it.
func threadByID(t testing.TB, r *Room, id string) Thread {
	t.Helper()
	for _, th := range r.Threads() {
		if th.ID == id {
			return th
		}
	}
	t.Fatalf("no thread %s", id)
	return Thread{}
}

// passageText is what the plan reads at p.
func passageText(t testing.TB, source string, p Passage) string {
	t.Helper()
	return utf16Substring(source, p.From, p.To)
}

// blockHolding is the index of the block whose text holds s.
func blockHolding(t testing.TB, r *Room, s string) *int {
	t.Helper()
	plan := r.Plan()
	for _, b := range plan.Blocks {
		if strings.Contains(BlockSource(plan.Source, b), s) {
			return blockIndex(b.Index)
		}
	}
	t.Fatalf("no block holds %q", s)
	return nil
}

// lastUpdate is the change set of the one update of the last plan:updates
// frame the tab received, with its clientID.
func lastUpdate(t testing.TB, frames []map[string]any) (ChangeSet, string) {
	t.Helper()
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i]["type"] != "plan:updates" {
			continue
		}
		us := frames[i]["updates"].([]any)
		if len(us) != 1 {
			t.Fatalf("plan:updates with %d updates", len(us))
		}
		u := us[0].(map[string]any)
		raw, _ := json.Marshal(u["changes"])
		return mustParseChangeSet(t, string(raw)), u["clientID"].(string)
	}
	t.Fatalf("no plan:updates in %v", types(frames))
	return ChangeSet{}, ""
}

// changed is one changed section of a change set: the text it removes from
// the old document, what it inserts, and where it starts in it (UTF-16).
type changed struct {
	at              int
	removed, insert string
}

func changesOf(old string, c ChangeSet) []changed {
	var out []changed
	pos := 0
	for _, s := range c.sections {
		if !s.kept {
			out = append(out, changed{at: pos, removed: utf16Substring(old, pos, pos+s.len), insert: s.insert})
		}
		pos += s.len
	}
	return out
}

const exampleSource = "# Launch plan\n\n" +
	"We ship the rocket in May, once the crew has trained and the pad is ready.\n\n" +
	"The checklist is reviewed twice, by two people who did not write it.\n\n" +
	"Alpha block.\n\nMiddle block.\n\nOmega block.\n"

// TestEditPlanBatchChangesOnlyItsBlocks is the example: threads on
// three blocks, then one edit_plan call replaces the first and deletes the
// last. The block between them is untouched, and every consumer sees that.
func TestEditPlanBatchChangesOnlyItsBlocks(t *testing.T) {
	ctx := context.Background()
	r, _, tab := exactRoom(t, exampleSource)
	ids := startThreads(t, r, "Alpha block.", "Middle block.", "Omega block.")
	tab.take()
	plan := r.Plan()
	// Another tab typed in the Middle block and had not yet pushed it.
	mid := strings.Index(plan.Source, "Middle") + 3
	typing := mustParseChangeSet(t, string(changeJSON(UTF16Len(plan.Source), mid, 0, "x")))

	_, err := r.EditPlan(ctx, EditPlanArgs{Revision: plan.Revision, Operations: []Operation{
		{Op: OpReplace, Index: blockHolding(t, r, "Alpha"), Content: contentOf("Alpha block, revised.")},
		{Op: OpDelete, Index: blockHolding(t, r, "Omega")},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	after := r.Plan().Source
	want := strings.Replace(strings.Replace(exampleSource, "Alpha block.", "Alpha block, revised.", 1), "\n\nOmega block.", "", 1)
	if after != want {
		t.Fatalf("plan %q\nwant %q", after, want)
	}

	middle := threadByID(t, r, ids["Middle block."])
	if middle.Passage.State != AnchorExact || passageText(t, after, middle.Passage) != "Middle block." {
		t.Errorf("the untouched block's thread: %+v reads %q", middle.Passage, passageText(t, after, middle.Passage))
	}
	alpha := threadByID(t, r, ids["Alpha block."])
	if alpha.Passage.State != AnchorChanged || passageText(t, after, alpha.Passage) != "Alpha block, revised." {
		t.Errorf("the replaced block's thread: %+v reads %q", alpha.Passage, passageText(t, after, alpha.Passage))
	}
	if omega := threadByID(t, r, ids["Omega block."]); omega.Passage.State != AnchorOrphaned {
		t.Errorf("the deleted block's thread: %+v", omega.Passage)
	}

	frames := tab.take()
	cs, client := lastUpdate(t, frames)
	if client != plannerClientID {
		t.Errorf("the update is %q's", client)
	}
	got := changesOf(exampleSource, cs)
	if len(got) != 2 || got[0].removed != "Alpha block." || got[0].insert != "Alpha block, revised." ||
		strings.TrimSpace(got[1].removed) != "Omega block." || got[1].insert != "" ||
		!strings.Contains(utf16Substring(exampleSource, got[0].at+UTF16Len(got[0].removed), got[1].at), "Middle block.") {
		js, _ := cs.MarshalJSON()
		t.Errorf("tabs received %s: %+v\nwant one replacement of the Alpha block and one deletion of the Omega block, the Middle block kept between", js, got)
	}
	// Only the threads whose state changed are sent again.
	for _, f := range frames {
		if f["type"] == "comment:thread" && f["thread"].(map[string]any)["id"] == ids["Middle block."] {
			t.Errorf("the untouched block's thread was sent again: %v", f)
		}
	}

	// The other tab's typing rebases onto the Planner's change and stays
	// in the Middle block, where it was typed.
	rebased, err := typing.Map(cs, false)
	if err != nil {
		t.Fatal(err)
	}
	if typed, err := rebased.Apply(after); err != nil || !strings.Contains(typed, "\n\nMidxdle block.\n") {
		t.Errorf("the typing rebased onto the Planner's change gives %q, %v", typed, err)
	}
}

// TestEditPlanReplacedBlockKeepsItsThreads: a thread on any part of a
// block the Planner replaced covers the replacement and says it changed;
// one on a block it moved follows the block.
func TestEditPlanReplacedBlockKeepsItsThreads(t *testing.T) {
	ctx := context.Background()
	r, mc, _ := exactRoom(t, exampleSource)
	ids := startThreads(t, r, "Alpha", "pha blo", "block.", "Middle block.")
	plan := r.Plan()
	_, err := r.EditPlan(ctx, EditPlanArgs{Revision: plan.Revision, Operations: []Operation{
		{Op: OpReplace, Index: blockHolding(t, r, "Alpha"), Content: contentOf("Alpha block, revised.")},
		{Op: OpMove, Index: blockHolding(t, r, "Middle"), To: blockIndex(-1)},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	after := r.Plan().Source
	for _, q := range []string{"Alpha", "pha blo", "block."} {
		p := threadByID(t, r, ids[q]).Passage
		if p.State != AnchorChanged || passageText(t, after, p) != "Alpha block, revised." {
			t.Errorf("a thread on %q in the replaced block: %+v reads %q", q, p, passageText(t, after, p))
		}
	}
	if p := threadByID(t, r, ids["Middle block."]).Passage; p.State != AnchorExact || passageText(t, after, p) != "Middle block." || p.StartLine != 1 {
		t.Errorf("a thread on the moved block: %+v in %q", p, after)
	}
	// A crash now: the journal's update alone would leave the moved
	// block's thread where the block was; it was stored with the batch.
	_, r2, release2 := openCommentDoc(t, mc)
	defer release2()
	if got, want := r2.Threads(), r.Threads(); !reflect.DeepEqual(got, want) {
		t.Errorf("after a crash\n%+v\nwant\n%+v", got, want)
	}
}

// TestReplaceTextChangesOnlyWhatChanged: a whole new plan (an HTTP PUT,
// MCP's update_document) is compared by lines, then by words within the
// lines that changed.
func TestReplaceTextChangesOnlyWhatChanged(t *testing.T) {
	const before = "# Plan\n\nUse Postgres for everything, and keep backups daily.\n\nShip in May.\n\nNone yet.\n"
	const after = "# Plan\n\nUse SQLite for everything, and keep backups daily.\n\nShip in May.\n\nNone yet, but see below.\n"
	r, _, tab := exactRoom(t, before)
	ids := startThreads(t, r, "Postgres", "keep backups daily", "Ship in May.", "None yet.")
	tab.take()
	if _, err := r.ReplaceText(context.Background(), r.Plan().Version, after); err != nil {
		t.Fatal(err)
	}
	cs, client := lastUpdate(t, tab.take())
	if client != serverClientID {
		t.Errorf("the update is %q's", client)
	}
	kept := UTF16Len(" for everything, and keep backups daily.\n\nShip in May.\n\nNone yet")
	want := `[12,[8,"SQLite"],` + itoa(kept) + `,[0,", but see below"],2]`
	if got := mustMarshalChangeSet(t, cs); got != want {
		t.Errorf("tabs received %s, want %s", got, want)
	}
	for q, want := range map[string]struct{ state, reads string }{
		"Postgres":           {AnchorChanged, "SQLite"},
		"keep backups daily": {AnchorExact, "keep backups daily"},
		"Ship in May.":       {AnchorExact, "Ship in May."},
		"None yet.":          {AnchorChanged, "None yet, but see below."},
	} {
		p := threadByID(t, r, ids[q]).Passage
		if p.State != want.state || passageText(t, after, p) != want.reads {
			t.Errorf("thread on %q: %+v reads %q, want %s %q", q, p, passageText(t, after, p), want.state, want.reads)
		}
	}
}

// remarshal decodes a frame read as a map into v.
func remarshal(t testing.TB, frame map[string]any, v any) {
	t.Helper()
	raw, err := json.Marshal(frame)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// TestDiffChangeSetDocExample is docs/room-protocol.md's example, and the
// final line break gained or lost on a line that stays.
func TestDiffChangeSetDocExample(t *testing.T) {
	for _, c := range []struct{ before, after, want string }{
		{"Use Postgres for everything.", "Use SQLite for everything.", `[4,[8,"SQLite"],16]`},
		{"# Plan\n\nShip it.", "# Plan\n\nShip it.\n", `[16,[0,"",""]]`},
		{"# Plan\n\nShip it.\n", "# Plan\n\nShip it.", `[16,[1]]`},
		{"# Plan\n\nShip it.", "# Plan\n\nShip it.\n\nThen rest.\n", `[16,[0,"","","Then rest.",""]]`},
		{"a\nb\nc\n", "a\nc\n", `[2,[2],2]`},
	} {
		if got := mustMarshalChangeSet(t, DiffChangeSet(c.before, c.after)); got != c.want {
			t.Errorf("DiffChangeSet(%q, %q) = %s, want %s", c.before, c.after, got, c.want)
		}
	}
}

// TestDiffChangeSetPastItsBounds: plans that differ everywhere, a stretch
// of changes past what Myers' algorithm looks for, and a comparison with
// no budget left give coarser change sets that are still right.
func TestDiffChangeSetPastItsBounds(t *testing.T) {
	before, after := benchPlan(250_000, "launch"), benchPlan(250_000, "landing")
	checkDiff(t, before, after, DiffChangeSet(before, after))

	// No line occurs once, and over diffCap lines changed: one replacement,
	// less the common start and end.
	a := strings.Repeat("one\ntwo\n", 1500)
	b := strings.Repeat("two\none\none\n", 1000)
	c := DiffChangeSet(a, b)
	checkDiff(t, a, b, c)
	if n := len(changesOf(a, c)); n != 1 {
		t.Errorf("past diffCap: %d changes, want the one replacement", n)
	}

	// With no budget, the lines that occur once still anchor the
	// comparison; the rest is replaced whole, and the result is right.
	rng := rand.New(rand.NewPCG(27, 9))
	k := 0
	for range 300 {
		old := randomPlan(rng, 1+rng.IntN(14))
		now := rewriteModel(rng, old, &k).String()
		for _, budget := range []int{0, 10, 1000} {
			d := differ{budget: budget}
			checkDiff(t, old, now, changeSetOf(old, now, d.text(old, now)))
		}
	}
}
