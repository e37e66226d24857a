package store

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// edit commits the plan's next one-character update.
func edit(t *testing.T, s *Store, channelID string, version int64) {
	t.Helper()
	if err := s.CommitPlan(context.Background(), channelID, []PlanUpdate{{Version: version, ClientID: "t", Changes: json.RawMessage(`[7,[0,"a"]]`)}}); err != nil {
		t.Fatal(err)
	}
}

// logSize is the size of the store's write-ahead log file.
func logSize(t *testing.T, s *Store) int64 {
	t.Helper()
	fi, err := os.Stat(s.path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func planForEdits(t *testing.T, s *Store) string {
	t.Helper()
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, "Plan")
	if err := s.CheckpointPlan(context.Background(), ch.ID, PlanCheckpoint{Epoch: "e", Source: "# Plan\n"}); err != nil {
		t.Fatal(err)
	}
	return ch.ID
}

// Edits with pauses between them, as a person makes them: the store's own
// checkpoints keep the log short, and no commit checkpoints it (the write
// connection's bound is far above what the edits write).
func TestWALCheckpointedBesideCommits(t *testing.T) {
	s := openTest(t)
	var auto int
	if err := s.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != walAutoCheckpointPages {
		t.Fatalf("the write connection checkpoints at %d pages (%v), want %d", auto, err, walAutoCheckpointPages)
	}
	id := planForEdits(t, s)
	version := int64(0)
	// Up to the next checkpoint, so that every round below ends with one.
	for s.writes.Load()%walCheckpointEvery != 0 {
		version++
		edit(t, s, id, version)
	}
	// The pause: the checkpoint asked for after the last write finishes.
	pause := func() {
		for deadline := time.Now().Add(10 * time.Second); s.walCheckpointed.Load() < s.writes.Load(); {
			if time.Now().After(deadline) { // a hang, not a latency bound
				t.Fatalf("no checkpoint after write %d", s.writes.Load())
			}
			time.Sleep(time.Millisecond)
		}
	}
	pause()
	const rounds, perRound = 10, 2 * walCheckpointEvery
	before := logSize(t, s)
	largest := before
	for range rounds {
		for range perRound {
			version++
			edit(t, s, id, version)
			largest = max(largest, logSize(t, s))
		}
		pause()
	}
	// Every edit writes at least a 4 KiB page. The log file keeps the
	// length it reached: unchecked, it would hold every round's pages.
	if limit := before + 2*perRound*4096; largest > limit {
		t.Errorf("over %d rounds of %d edits the log file reached %d KiB, past %d KiB (two rounds' pages)", rounds, perRound, largest>>10, limit>>10)
	}
}

// A writer that never pauses leaves the checkpoints beside it no moment to
// catch up: the log still stops at the write connection's bound.
func TestWALBoundedUnderEndlessWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB of log")
	}
	s := openTest(t)
	id := planForEdits(t, s)
	// Each edit writes two pages or more: unchecked, these would write
	// twice the bound.
	const edits = 4000
	largest := int64(0)
	for v := int64(1); v <= edits; v++ {
		edit(t, s, id, v)
		largest = max(largest, logSize(t, s))
	}
	// A page in the log is 4 KiB and a 24-byte header; a commit may end a
	// little past the bound.
	if limit := int64(walAutoCheckpointPages+100) * (4096 + 24); largest > limit {
		t.Errorf("over %d edits the log reached %d KiB, past the bound's %d KiB", edits, largest>>10, limit>>10)
	}
}
