package room

// Every thread moves through every committed change, open or closed: a
// dismissed or accepted thread keeps its place in the text, comment:sync
// gives it at the plan's current version, and a restart (a clean one, or
// a crash before the last checkpoint) gives every thread back as it was.

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestDismissedThreadMoves: dismiss a thread on "More text", then insert
// two lines at the start of the plan. The thread is where the text went,
// at the current version, in comment:sync, the room's list and after a
// restart.
func TestDismissedThreadMoves(t *testing.T) {
	ctx := context.Background()
	const source = "# Plan\n\nSome text.\n\nMore text to come.\n"
	mc := newMemComments()
	h, r, release := openCommentDoc(t, mc)
	if _, err := r.ReplaceText(ctx, 0, source); err != nil {
		t.Fatal(err)
	}
	ids := startThreads(t, r, "More text", "Some text.")
	ada := Identity{Login: "ada"}
	if _, err := r.DismissThread(ctx, ada, ids["More text"]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AcceptThread(ctx, ada, ids["Some text."]); err != nil {
		t.Fatal(err)
	}
	const intro = "Intro.\n\n"
	v := r.Plan().Version
	if _, err := r.Push(ctx, v, []Update{{ClientID: "t", Changes: changeJSON(UTF16Len(r.Plan().Source), 0, 0, intro)}}); err != nil {
		t.Fatal(err)
	}
	text := r.Plan().Source
	at := strings.Index(text, "More text")
	wantFrom, wantLine := UTF16Len(text[:at]), strings.Count(text[:at], "\n")+1 // two lines down, past the accepted thread's record
	if !strings.HasPrefix(text, intro) || wantLine != 9 {
		t.Fatalf("the plan reads %q", text)
	}
	check := func(when string, sync CommentSync) {
		t.Helper()
		if sync.Version != r.Plan().Version {
			t.Errorf("%s: comment:sync at version %d, the plan is at %d", when, sync.Version, r.Plan().Version)
		}
		for _, th := range sync.Threads {
			p := th.Passage
			if p.Version != sync.Version {
				t.Errorf("%s: the %s thread's passage is at version %d, not %d", when, th.Status, p.Version, sync.Version)
			}
			if p.State != AnchorExact || passageText(t, text, p) != p.Quote {
				t.Errorf("%s: the %s thread %+v reads %q", when, th.Status, p, passageText(t, text, p))
			}
		}
		more := sync.Threads[0]
		if more.ID != ids["More text"] || more.Passage.From != wantFrom || more.Passage.StartLine != wantLine || more.Passage.EndLine != wantLine {
			t.Errorf("%s: the dismissed thread %+v, want from %d on line %d", when, more.Passage, wantFrom, wantLine)
		}
	}
	check("the room's list", r.CommentSync())

	// A tab asks for comment:sync.
	tab := &recConn{}
	m, err := h.Join(ctx, Channel{ID: "doc", Title: "Plan"}, Identity{Login: "bo", CanEdit: true}, tab)
	if err != nil {
		t.Fatal(err)
	}
	tab.take()
	m.Receive(ctx, []byte(`{"type":"comment:sync","id":"s1"}`))
	frames := tab.take()
	if len(frames) != 1 || frames[0]["type"] != "comment:sync" || frames[0]["id"] != "s1" {
		t.Fatalf("comment:sync answered %v", frames)
	}
	var sync CommentSync
	remarshal(t, frames[0], &sync)
	check("comment:sync", sync)
	before := r.Threads()
	m.Leave()

	// A crash: the next process opens the document without this one
	// having closed it.
	_, r2, release2 := openCommentDoc(t, mc)
	if got := r2.Threads(); !reflect.DeepEqual(got, before) {
		t.Errorf("after a crash\n%+v\nwant\n%+v", got, before)
	}
	release2()
	// A clean restart.
	release()
	h.Close()
	_, r3, release3 := openCommentDoc(t, mc)
	defer release3()
	if got := r3.Threads(); !reflect.DeepEqual(got, before) {
		t.Errorf("after a restart\n%+v\nwant\n%+v", got, before)
	}
}

// TestThreadsSurviveRestartsInEveryState: open, accepted and dismissed
// threads through random edits (past a checkpoint), then a crash and a
// clean restart: every thread comes back exactly as the room had it, and
// reads as its state says.
func TestThreadsSurviveRestartsInEveryState(t *testing.T) {
	ctx := context.Background()
	ada := Identity{Login: "ada"}
	rng := rand.New(rand.NewPCG(27, 2))
	const source = "# Plan\n\nAlpha one.\n\nBravo two.\n\nCharlie three.\n\nDelta four.\n\nEcho five.\n\nFoxtrot six.\n"
	quotes := []string{"Alpha one.", "Bravo", "Charlie three.", "four", "Echo five.", "Foxtrot"}
	for run := range 4 {
		mc := newMemComments()
		h, r, release := openCommentDoc(t, mc)
		if _, err := r.ReplaceText(ctx, 0, source); err != nil {
			t.Fatal(err)
		}
		ids := startThreads(t, r, quotes...)
		for i, q := range quotes {
			var err error
			switch i % 3 {
			case 1:
				_, err = r.DismissThread(ctx, ada, ids[q])
			case 2:
				_, err = r.AcceptThread(ctx, ada, ids[q])
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		edits := checkpointEvery + 50 + rng.IntN(100)
		for range edits {
			text := r.Plan().Source
			n := UTF16Len(text)
			at := rng.IntN(n + 1)
			del := 0
			if at < n && rng.IntN(3) == 0 {
				del = 1 + rng.IntN(min(n-at, 3))
			}
			ins := []string{"x", "", " ", "\n", "é"}[rng.IntN(5)]
			if del == 0 && ins == "" || n-del+UTF16Len(ins) == 0 {
				continue
			}
			// A push that would break a <Comment> record is refused; try another.
			r.Push(ctx, r.Plan().Version, []Update{{ClientID: "t", Changes: changeJSON(n, at, del, ins)}})
		}
		before := r.Threads()
		text := r.Plan().Source
		for _, th := range before {
			p := th.Passage
			if p.Version != r.Plan().Version {
				t.Errorf("run %d: the %s thread is at version %d, the plan at %d", run, th.Status, p.Version, r.Plan().Version)
			}
			if p.State == AnchorOrphaned {
				continue
			}
			if reads := passageText(t, text, p); (reads == p.Quote) != (p.State == AnchorExact) {
				t.Errorf("run %d: the %s thread says %s and reads %q (quote %q)", run, th.Status, p.State, reads, p.Quote)
			}
		}
		_, r2, release2 := openCommentDoc(t, mc)
		if got := r2.Threads(); !reflect.DeepEqual(got, before) {
			t.Errorf("run %d: after a crash\n%+v\nwant\n%+v", run, got, before)
		}
		release2()
		release()
		h.Close()
		_, r3, release3 := openCommentDoc(t, mc)
		if got := r3.Threads(); !reflect.DeepEqual(got, before) {
			t.Errorf("run %d: after a restart\n%+v\nwant\n%+v", run, got, before)
		}
		release3()
	}
}
