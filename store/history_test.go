package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestHistoryMigrationKeepsWhatPlansHold: a plan stored before the history
// existed keeps, after the upgrade, its checkpoint as a snapshot and the
// journal after it as versions; and the history's migration runs again
// harmlessly.
func TestHistoryMigrationKeepsWhatPlansHold(t *testing.T) {
	ctx := context.Background()
	s, path, ch := storedPlan(t, "Older plan", 3, "# Older\n")
	if err := s.CommitPlan(ctx, ch.ID, []PlanUpdate{{Version: 4, ClientID: "tab", Changes: json.RawMessage(`[8,[0,"x"]]`)},
		{Version: 5, ClientID: "planner", Changes: json.RawMessage(`[9,[0,"y"]]`)}}); err != nil {
		t.Fatal(err)
	}
	// As the schema before the history held it: no history at all.
	for _, q := range []string{`DELETE FROM plan_history`, `DELETE FROM plan_snapshots`,
		`DELETE FROM schema_migrations WHERE version >= 18`} {
		if _, err := s.write.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	s.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.History(ctx, ch.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Version != 5 || es[0].Author.Kind != "planner" || es[1].Author.Kind != "person" ||
		es[2].Version != 3 || es[2].Changes != nil {
		t.Fatalf("history %+v", es)
	}
	b, err := s.HistoryBaseOf(ctx, ch.ID, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Found || b.Version != 3 || b.Source != "# Older\n" || len(b.Changes) != 2 {
		t.Fatalf("base %+v", b)
	}
}

// TestHistoryCommitIsFenced: a refused commit (another writer's version)
// keeps no history either; an accepted one keeps its author.
func TestHistoryCommitIsFenced(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, "Fenced")
	if err := s.CheckpointPlan(ctx, ch.ID, PlanCheckpoint{Epoch: "e", Version: 0, Source: "# F\n"}); err != nil {
		t.Fatal(err)
	}
	ok := PlanUpdate{Version: 1, ClientID: "c", Changes: json.RawMessage(`[4,[0,"a"]]`), Author: PlanAuthor{Kind: "mcp", Name: "codex"}}
	if err := s.CommitPlan(ctx, ch.ID, []PlanUpdate{ok}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitPlan(ctx, ch.ID, []PlanUpdate{{Version: 1, ClientID: "d", Changes: json.RawMessage(`[5,[0,"b"]]`)}}); err == nil {
		t.Fatal("a second version 1 was accepted")
	}
	es, _ := s.History(ctx, ch.ID, 0, 10)
	if len(es) != 2 || es[0].Author != (PlanAuthor{Kind: "mcp", Name: "codex"}) || string(es[0].Changes) != `[4,[0,"a"]]` {
		t.Fatalf("history %+v", es)
	}
}

// storedPlan opens a store in a new file with one document, its plan
// checkpointed at version with source: the store, its file and the
// document. The caller closes the store.
func storedPlan(t *testing.T, title string, version int64, source string) (*Store, string, Channel) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chopin.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, title)
	if err := s.CheckpointPlan(context.Background(), ch.ID, PlanCheckpoint{Epoch: "e", Version: version, Source: source}); err != nil {
		t.Fatal(err)
	}
	return s, path, ch
}
