package store

import (
	"context"
	"encoding/json"
	"testing"
)

// TestHistoryRevertKind: the history keeps a revert as its own kind of
// author, after the migration that allows it, and the migration run again
// keeps every row; a turn's versions read back in order.
func TestHistoryRevertKind(t *testing.T) {
	ctx := context.Background()
	s, path, ch := storedPlan(t, "Reverted", 0, "# R\n")
	if err := s.CommitPlan(ctx, ch.ID, []PlanUpdate{
		{Version: 1, ClientID: "planner", Changes: json.RawMessage(`[4,[0,"a"]]`), Author: PlanAuthor{Kind: "planner", Turn: "t1"}},
		{Version: 2, ClientID: "planner", Changes: json.RawMessage(`[5,[0,"b"]]`), Author: PlanAuthor{Kind: "planner", Turn: "t1"}},
		{Version: 3, ClientID: "server", Changes: json.RawMessage(`[4,[2]]`), Author: PlanAuthor{Kind: "revert", Name: "ada"}},
	}); err != nil {
		t.Fatal(err)
	}
	// The last migration run again, as an upgrade test replays it.
	if _, err := s.write.Exec(`DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.HistoryChanges(ctx, ch.ID, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[2].Author != (PlanAuthor{Kind: "revert", Name: "ada"}) || string(es[0].Changes) != `[4,[0,"a"]]` {
		t.Fatalf("history %+v", es)
	}
	vs, err := s.HistoryTurn(ctx, ch.ID, "t1")
	if err != nil || len(vs) != 2 || vs[0] != 1 || vs[1] != 2 {
		t.Fatalf("turn %v %v", vs, err)
	}
	if vs, _ := s.HistoryTurn(ctx, ch.ID, ""); len(vs) != 0 {
		t.Fatalf("the empty turn %v", vs)
	}
}
