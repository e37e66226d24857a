package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// The upgrade to the specification's decision statuses: answered is
// decided, cancelled is discarded by the member who cancelled it,
// withdrawn is expired; an open card stays open, and every card keeps its
// answer and its place.
func TestDecisionStatusesUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chopin.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ch := mustChannel(t, s, mustRepo(t, s, "o/r").NodeID, "Upgrade")
	s.Close()

	ms, _ := migrations()
	var upgrade string
	for _, m := range ms {
		if strings.HasSuffix(m.name, "_decision_history.sql") {
			upgrade = m.sql
		}
	}
	if upgrade == "" {
		t.Fatal("no decision_history migration")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	// The table as the schema before kept it.
	for _, q := range []string{`DROP TABLE decisions`, `CREATE TABLE decisions (
		id TEXT PRIMARY KEY, channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
		request TEXT NOT NULL, idx INTEGER NOT NULL, call TEXT NOT NULL,
		status TEXT NOT NULL CHECK (status IN ('open', 'answered', 'cancelled', 'withdrawn')),
		answer TEXT, answered_by TEXT NOT NULL DEFAULT '', block INTEGER NOT NULL,
		created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, seq INTEGER NOT NULL DEFAULT 0) STRICT`,
		`CREATE INDEX decisions_order ON decisions (channel_id, seq)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for i, row := range [][3]string{{"open", "", ""}, {"answered", `{"yes":true}`, "ada"}, {"cancelled", "", "bo"}, {"withdrawn", "", ""}} {
		var answer any
		if row[1] != "" {
			answer = row[1]
		}
		if _, err := db.Exec(`INSERT INTO decisions (id, channel_id, request, idx, call, status, answer, answered_by, block, created_at, updated_at, seq)
			VALUES (?, ?, 'r', ?, '{}', ?, ?, ?, -1, 1, 1, ?)`, "d"+row[0], ch.ID, i, row[0], answer, row[2], i+1); err != nil {
			t.Fatal(err)
		}
	}
	tx, _ := db.Begin()
	if _, err := tx.Exec(upgrade); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ds, err := s.Decisions(ctx, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ id, status, answer, by, discardedBy string }
	want := []got{{"dopen", "open", "", "", ""}, {"danswered", "decided", `{"yes":true}`, "ada", ""},
		{"dcancelled", "discarded", "", "", "bo"}, {"dwithdrawn", "expired", "", "", ""}}
	if len(ds) != len(want) {
		t.Fatalf("%d cards after the upgrade, want %d", len(ds), len(want))
	}
	for i, d := range ds {
		if g := (got{d.ID, d.Status, string(d.Answer), d.AnsweredBy, d.DiscardedBy}); g != want[i] {
			t.Errorf("card %d after the upgrade %+v, want %+v", i, g, want[i])
		}
	}
	// The new statuses, and a card's earlier answers, are kept.
	d := ds[1]
	d.Status, d.Previous = "reopened", []byte(`[{"answer":{"yes":true},"answeredBy":"ada","decidedAt":1,"reopenedAt":2}]`)
	if err := s.SaveDecisions(ctx, ch.ID, []Decision{d}, nil); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Decision(ctx, d.ID)
	if again.Status != "reopened" || string(again.Previous) != string(d.Previous) {
		t.Errorf("saved %+v", again)
	}
}
