package room

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The plan's journal across checkpoints and restarts: a tab that was away
// catches up from the updates kept for it, at every edge of what is kept,
// and a journal with a hole is never replayed across it.

// openFrom has a fresh member on the hub send plan:open at (epoch,
// version) and returns the reply.
func openFrom(t *testing.T, h *Hub, ch Channel, epoch string, version int64) map[string]any {
	t.Helper()
	c := &recConn{}
	m, err := h.Join(context.Background(), ch, ada, c)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	c.take()
	m.Receive(context.Background(), []byte(fmt.Sprintf(`{"type":"plan:open","id":"o","epoch":%q,"version":%d}`, epoch, version)))
	got := c.take()
	if len(got) != 1 {
		t.Fatalf("plan:open at %d: %v", version, types(got))
	}
	return got[0]
}

func TestAwayTabsCatchUpAcrossCheckpoints(t *testing.T) {
	p := newFaultPersister()
	fr := newFaultRoom(t, p)
	const pushes = 2*checkpointEvery + 50
	for i := range pushes {
		fr.push(fmt.Sprintf("line %d\n", i))
	}
	want := fr.room.Plan()
	p.memPersister.mu.Lock() // the stored plan's lock, not the fault counter's
	cp := p.plans[fr.channel.ID].Checkpoint.Version
	p.memPersister.mu.Unlock()
	if cp != 2*checkpointEvery {
		t.Errorf("after %d updates the checkpoint is at %d", pushes, cp)
	}
	fr.actor.Leave()
	fr.watcher.Leave()
	fr.hub.Close()

	// After a restart the journal still holds the last keepUpdates updates.
	h := NewHub(Options{Persister: p.memPersister})
	oldest := want.Version - keepUpdates
	for _, tc := range []struct {
		version int64
		typ     string
		updates int
	}{
		{0, "plan:snapshot", 0},
		{oldest - 1, "plan:snapshot", 0},
		{oldest, "plan:updates", keepUpdates},
		{oldest + 1, "plan:updates", keepUpdates - 1},
		{want.Version - 1, "plan:updates", 1},
		{want.Version, "plan:updates", 0},
		{want.Version + 1, "plan:snapshot", 0}, // a version this server never reached
	} {
		got := openFrom(t, h, fr.channel, want.Epoch, tc.version)
		if got["type"] != tc.typ || got["id"] != "o" {
			t.Errorf("plan:open at %d of %d: %v, want %s", tc.version, want.Version, got["type"], tc.typ)
			continue
		}
		if tc.typ == "plan:snapshot" {
			if got["source"] != want.Source || got["version"] != float64(want.Version) {
				t.Errorf("snapshot at %d: version %v", tc.version, got["version"])
			}
			continue
		}
		us := got["updates"].([]any)
		if len(us) != tc.updates || got["version"] != float64(tc.version) {
			t.Errorf("plan:open at %d: %d updates from %v, want %d", tc.version, len(us), got["version"], tc.updates)
			continue
		}
		// The updates rebuild the text from the version the tab had.
		if tc.updates > 0 {
			first, _ := json.Marshal(us[0].(map[string]any)["changes"])
			cs, err := ParseChangeSet(first)
			if err != nil {
				t.Fatal(err)
			}
			if cs.LenBase() != len(textAt(tc.version)) {
				t.Errorf("plan:open at %d: the first update applies to %d bytes, the text had %d", tc.version, cs.LenBase(), len(textAt(tc.version)))
			}
		}
	}
	// Another epoch always reloads.
	if got := openFrom(t, h, fr.channel, "another", want.Version); got["type"] != "plan:snapshot" {
		t.Errorf("plan:open in another epoch: %v", got["type"])
	}
	h.Close()
}

// textAt is the plan of TestAwayTabsCatchUpAcrossCheckpoints at version v.
func textAt(v int64) string {
	var b strings.Builder
	b.WriteString("# Doc\n")
	for i := range v {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestJournalWithAHoleIsNotReplayedAcrossIt(t *testing.T) {
	p := newMemPersister()
	ctx := context.Background()
	ch := Channel{ID: "c1", Title: "Doc"}
	p.CheckpointPlan(ctx, ch.ID, Checkpoint{Epoch: "e1", Version: 0, Source: "# Doc\n"})
	p.CommitPlan(ctx, ch.ID, []Update{
		{Version: 1, ClientID: "tab", Changes: json.RawMessage(`[6,[0,"one",""]]`)},
		{Version: 3, ClientID: "tab", Changes: json.RawMessage(`[10,[0,"three",""]]`)},
	})
	h := NewHub(Options{Persister: p})
	r, release, err := h.Acquire(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Plan()
	release()
	h.Close()
	if got.Version != 1 || got.Source != "# Doc\none\n" || got.Epoch == "e1" {
		t.Errorf("after a hole at 2: epoch %s version %d %q; want a new epoch at 1 with the text up to the hole", got.Epoch, got.Version, got.Source)
	}
	rec, _ := p.LoadPlan(ctx, ch.ID)
	if rec.Checkpoint.Version != 1 || rec.Checkpoint.Epoch != got.Epoch || rec.Checkpoint.Source != got.Source {
		t.Errorf("the text kept was not checkpointed: %+v", rec.Checkpoint)
	}
}
