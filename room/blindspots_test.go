package room

// The per-document bounds of comment threads at their exact values: 200
// open at once, 2,000 kept in all (closed ones count), each document apart
// from the others, and the bound still there after the document is opened
// again from storage.

import (
	"context"
	"strings"
	"testing"
)

func TestThreadBoundsPerDocument(t *testing.T) {
	ctx := context.Background()
	ada := Identity{Login: "ada"}
	mc := newMemComments()
	h := NewHub(Options{Persister: mc.p, Comments: mc})
	open := func(id string) *Room {
		t.Helper()
		r, release, err := h.Acquire(ctx, Channel{ID: id, Title: "Plan " + id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(release)
		if _, err := r.ReplaceText(ctx, r.Plan().Version, "# Plan\n\nUse Postgres.\n"); err != nil {
			t.Fatal(err)
		}
		return r
	}
	wantRefused := func(r *Room, says string) {
		t.Helper()
		_, err := r.StartThread(ctx, ada, threadOn(r, "Postgres", "one too many"))
		var re *Error
		if !asError(err, &re) || re.Code != CodeTooManyThreads || !strings.Contains(re.Message, says) {
			t.Fatalf("got %v, want %s saying %q", err, CodeTooManyThreads, says)
		}
	}
	a, b := open("a"), open("b")

	var ids []string
	for i := range MaxOpenThreads {
		th, err := a.StartThread(ctx, ada, threadOn(a, "Postgres", "open"))
		if err != nil {
			t.Fatalf("open thread %d of %d: %v", i+1, MaxOpenThreads, err)
		}
		ids = append(ids, th.ID)
	}
	wantRefused(a, "already has 200 open comment threads")
	if _, err := b.StartThread(ctx, ada, threadOn(b, "Postgres", "another document")); err != nil {
		t.Fatalf("another document's first thread: %v", err)
	}
	for _, id := range ids {
		if _, err := a.DismissThread(ctx, ada, id); err != nil {
			t.Fatal(err)
		}
	}
	// Closed threads are kept and count: up to 2,000 in all.
	for n := MaxOpenThreads; n < maxThreads; n++ {
		th, err := a.StartThread(ctx, ada, threadOn(a, "Postgres", "kept"))
		if err != nil {
			t.Fatalf("thread %d of %d: %v", n+1, maxThreads, err)
		}
		if n < maxThreads-1 {
			if _, err := a.DismissThread(ctx, ada, th.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := len(a.Threads()); got != maxThreads {
		t.Fatalf("%d threads kept, want %d", got, maxThreads)
	}
	wantRefused(a, "already keeps 2000 comment threads")
	if _, err := b.StartThread(ctx, ada, threadOn(b, "Postgres", "still fine")); err != nil {
		t.Fatalf("another document after the first is full: %v", err)
	}

	// Opened again from storage, as after a restart, the document is full.
	h2 := NewHub(Options{Persister: mc.p, Comments: mc})
	a2, release, err := h2.Acquire(ctx, Channel{ID: "a", Title: "Plan a"})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	wantRefused(a2, "already keeps 2000 comment threads")
}
