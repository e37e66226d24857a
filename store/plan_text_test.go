package store

// The migration that gives a plan's checkpoint text a row of its own keeps
// every plan's text, version and journal.

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanTextMigrationKeepsPlans(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chopin.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRepo(t, s, "o/r")
	ch, err := s.CreateChannel(ctx, r.NodeID, "Older plan")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Take the database back to the schema before the migration, with a
	// plan stored as that schema stored it: the text in the plans row.
	ms, _ := migrations()
	at := -1
	for i, m := range ms {
		if strings.HasSuffix(m.name, "_plan_text.sql") {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("no plan_text migration")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	text := "# Older plan\n\n" + strings.Repeat("A long paragraph of the plan. ", 10_000)
	// The search index's migration and the creation order's come after
	// this one and are run again, so what they made goes too.
	undoCreationOrder(t, db)
	for _, q := range []string{
		`DROP TABLE channel_catalog_search`, `DROP TABLE channel_plan_search`, `DROP TABLE channel_search_rows`,
		`DROP TABLE channel_plan_lines`, `DROP TRIGGER channel_search_insert`, `DROP TRIGGER channel_search_catalog`,
		`DROP TABLE plan_texts`,
		`ALTER TABLE plans ADD COLUMN checkpoint_source TEXT NOT NULL DEFAULT ''`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version > ?`, ms[at].version-1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO plans (channel_id, epoch, version, checkpoint_version, checkpoint_source, updated_at)
		VALUES (?, 'e', 2, 1, ?, 0)`, ch.ID, text); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO plan_journal VALUES (?, 2, 'c', '[[0,"x"],1]')`, ch.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.LoadPlan(ctx, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Exists || rec.Checkpoint.Source != text || rec.Checkpoint.Version != 1 || rec.Checkpoint.Epoch != "e" ||
		len(rec.Journal) != 1 || rec.Journal[0].Version != 2 {
		t.Fatalf("after the migration: exists %v, epoch %q, version %d, %d bytes of text, journal %v",
			rec.Exists, rec.Checkpoint.Epoch, rec.Checkpoint.Version, len(rec.Checkpoint.Source), rec.Journal)
	}
	// The plan goes on: a push, a checkpoint, and deleting the document
	// takes its text along.
	if err := s.CommitPlan(ctx, ch.ID, []PlanUpdate{{Version: 3, ClientID: "c", Changes: []byte(`[[0,"y"],1]`)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointPlan(ctx, ch.ID, PlanCheckpoint{Epoch: "e", Version: 3, Source: "# New\n", KeepAfter: 3}); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.LoadPlan(ctx, ch.ID); rec.Checkpoint.Source != "# New\n" || rec.Checkpoint.Version != 3 {
		t.Errorf("after a checkpoint: %q at %d", rec.Checkpoint.Source, rec.Checkpoint.Version)
	}
	if _, _, err := s.ArchiveChannel(ctx, ch.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChannel(ctx, ch.ID); err != nil {
		t.Fatal(err)
	}
	var texts int
	s.read.QueryRow(`SELECT count(*) FROM plan_texts`).Scan(&texts)
	if texts != 0 {
		t.Errorf("%d plan texts left after deleting the document", texts)
	}
}
