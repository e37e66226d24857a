package room

// A reply's deltas go to the members at once while the stream is idle,
// and together only under load.

import (
	"context"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestReplyDeltasGoAtOnceWhenIdle(t *testing.T) {
	clock := &fakeClock{t: time.UnixMilli(1_700_000_000_000)}
	h := NewHub(Options{Persister: newMemPersister(), Clock: clock.now})
	ctx := context.Background()
	c := &recConn{}
	m, err := h.Join(ctx, Channel{ID: "c1", Title: "Doc"}, ada, c)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	r, _ := h.Room("c1")
	p, err := r.StartReply(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	deltas := func() []string {
		var out []string
		for _, f := range c.take() {
			if f["type"] == "chat:delta" {
				out = append(out, f["delta"].(string))
			}
		}
		return out
	}
	c.take()

	p.Text("a")
	if got := deltas(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("the first delta: %q", got)
	}
	// A part a little less than deltaEvery after the last frame, but after
	// a quiet spell, is not held back.
	clock.advance(deltaQuiet + deltaQuiet/2)
	p.Text("b")
	if got := deltas(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("a delta after a quiet spell was held: %q", got)
	}
	// Under load, parts close together go in one frame.
	clock.advance(deltaQuiet / 4)
	p.Text("c")
	clock.advance(deltaQuiet / 4)
	p.Text("d")
	if got := deltas(); len(got) != 0 {
		t.Fatalf("deltas under load went one by one: %q", got)
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		got = deltas()
	}
	if len(got) != 1 || got[0] != "cd" {
		t.Fatalf("the batched deltas: %q", got)
	}
}
