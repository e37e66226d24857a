package room

// A checkpoint never delays an acknowledgement: it is written after the
// push that made it due is answered (and the answer flushed to the
// socket), outside the room's lock.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heldCheckpoints holds every checkpoint, once armed, until released.
type heldCheckpoints struct {
	*memPersister
	armed    atomic.Bool
	started  chan struct{}
	release  chan struct{}
	startOne sync.Once
}

func (p *heldCheckpoints) CheckpointPlan(ctx context.Context, id string, cp Checkpoint) error {
	if p.armed.Load() {
		p.startOne.Do(func() { close(p.started) })
		<-p.release
	}
	return p.memPersister.CheckpointPlan(ctx, id, cp)
}

// heldConn writes what it is sent only when flushed, as the app's browser
// socket does while its member handles a frame (it writes once Receive
// returns).
type heldConn struct {
	mu               sync.Mutex
	pending, written [][]byte
}

func (c *heldConn) Send(frame []byte) {
	c.mu.Lock()
	c.pending = append(c.pending, frame)
	c.mu.Unlock()
}

func (c *heldConn) Close(int, string) {}

func (c *heldConn) Flush() {
	c.mu.Lock()
	c.written = append(c.written, c.pending...)
	c.pending = nil
	c.mu.Unlock()
}

// take returns the frames written since the last take.
func (c *heldConn) take() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, f := range c.written {
		var m map[string]any
		if err := json.Unmarshal(f, &m); err != nil {
			panic(err)
		}
		out = append(out, m)
	}
	c.written = nil
	return out
}

func TestCheckpointNeverDelaysAnAck(t *testing.T) {
	p := &heldCheckpoints{memPersister: newMemPersister(), started: make(chan struct{}), release: make(chan struct{})}
	h := NewHub(Options{Persister: p})
	ch := Channel{ID: "c1", Title: "Doc"}
	ctx := context.Background()
	aC, bC := &heldConn{}, &heldConn{}
	a, err := h.Join(ctx, ch, ada, aC)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Join(ctx, ch, ada, bC)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := h.Room(ch.ID)
	push := func(m *Member) {
		pl := r.Plan()
		changes, _ := json.Marshal([]any{UTF16Len(pl.Source), []any{0, "x"}})
		m.Receive(ctx, fmt.Appendf(nil, `{"type":"plan:push","id":"p","version":%d,"updates":[{"clientID":"tab","changes":%s}]}`, pl.Version, changes))
		m.conn.(Flusher).Flush() // what the socket writes once Receive returns
	}
	acked := func(c *heldConn, version int64) bool {
		for _, f := range c.take() {
			if f["type"] == "plan:ack" && f["version"] == float64(version) {
				return true
			}
		}
		return false
	}
	for range checkpointEvery - 1 {
		push(a)
	}
	aC.take()
	bC.take()

	// The push that makes a checkpoint due is acknowledged, on the
	// socket, before the checkpoint is written.
	p.armed.Store(true)
	done := make(chan struct{})
	go func() { push(a); close(done) }()
	<-p.started
	if !acked(aC, checkpointEvery) {
		t.Fatal("the push that made the checkpoint due was not acknowledged before the checkpoint")
	}
	// Another tab's push goes through while the checkpoint is written.
	other := make(chan struct{})
	go func() { push(b); close(other) }()
	select {
	case <-other:
	case <-time.After(10 * time.Second): // a hang, not a latency bound
		t.Fatal("a push waited for the checkpoint being written")
	}
	if !acked(bC, checkpointEvery+1) {
		t.Fatal("the other tab's push was not acknowledged")
	}
	close(p.release)
	<-done

	p.mu.Lock()
	cp := p.plans[ch.ID].Checkpoint.Version
	p.mu.Unlock()
	if cp != checkpointEvery {
		t.Errorf("the checkpoint is at %d, want %d", cp, checkpointEvery)
	}
	// Closing the room writes the final checkpoint.
	a.Leave()
	b.Leave()
	h.Close()
	p.mu.Lock()
	cp = p.plans[ch.ID].Checkpoint.Version
	p.mu.Unlock()
	if cp != checkpointEvery+1 {
		t.Errorf("after closing, the checkpoint is at %d, want %d", cp, checkpointEvery+1)
	}
}
