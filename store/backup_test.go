package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Before a schema migration the database is copied beside itself; the copy
// passes integrity_check and holds the data at the old schema, even when the
// migration then fails.
func TestBackupBeforeMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chopin.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.AddRepository(ctx, "o/r", "")
	ch, _ := s.CreateChannel(ctx, r.NodeID, "Before the upgrade")
	s.Close()
	ms, _ := migrations()
	latest := len(ms)
	backup := fmt.Sprintf("%s.before-schema-%d", path, latest)
	if _, err := os.Stat(backup); !os.IsNotExist(err) {
		t.Fatalf("a fresh database was backed up: %v", err)
	}

	// Pretend the latest migration is new to this database: Open applies it
	// again (and fails, since its tables exist), after taking the copy.
	db, _ := sql.Open("sqlite", path)
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = ?`, latest); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(ctx, path); err == nil {
		s.Close()
	}
	if err := CheckIntegrity(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db, _ = sql.Open("sqlite", "file:"+backup+"?mode=ro")
	defer db.Close()
	var title string
	var version int
	db.QueryRow(`SELECT title FROM channels WHERE id = ?`, ch.ID).Scan(&title)
	db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&version)
	if title != "Before the upgrade" || version != latest-1 {
		t.Errorf("backup holds %q at schema %d, want the document at schema %d", title, version, latest-1)
	}
}

// Backup refuses to overwrite, and CheckIntegrity refuses what is not a
// sound database.
func TestBackupRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	dir := t.TempDir()
	dest := filepath.Join(dir, "copy.db")
	if err := s.Backup(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if err := s.Backup(ctx, dest); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second backup to the same file: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 400)), 0o600)
	if err := CheckIntegrity(ctx, junk); err == nil {
		t.Error("CheckIntegrity accepted a file that is not a database")
	}
}
