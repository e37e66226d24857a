package store

// Backups: a consistent copy of the database made with SQLite's VACUUM INTO
// while edits go on (a read transaction sees every commit made before it
// began and none after), checked with PRAGMA integrity_check. The same copy
// is taken before a schema migration, so an upgrade that goes wrong leaves
// the previous database beside the new one.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
)

// Backup writes a consistent copy of the database to dest, which must not
// exist yet, and checks the copy. Edits go on while it is written: the copy
// holds every edit committed before Backup began.
func (s *Store) Backup(ctx context.Context, dest string) error {
	// The read pool is query_only, which refuses VACUUM INTO too.
	return BackupFile(ctx, s.path, dest)
}

// BackupFile copies the database at path to dest, which must not exist,
// without a Store: for `chopin backup` when Chopin is not running. The
// database is opened read-only and never migrated, so a database a newer
// Chopin wrote can be backed up too.
func BackupFile(ctx context.Context, path, dest string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no database to back up: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	return vacuumInto(ctx, db, dest)
}

func vacuumInto(ctx context.Context, db *sql.DB, dest string) error {
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("%s already exists", dest)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		os.Remove(dest)
		return fmt.Errorf("back up the database to %s: %w", dest, err)
	}
	if err := CheckIntegrity(ctx, dest); err != nil {
		os.Remove(dest)
		return err
	}
	return nil
}

// CheckIntegrity opens the database file at path read-only and runs PRAGMA
// integrity_check; an error names the first problems SQLite found.
func CheckIntegrity(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check(10)`)
	if err != nil {
		return fmt.Errorf("%s is not a database Chopin can read: %w", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s is not a database Chopin can read: %w", path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s failed its integrity check: %s", path, strings.Join(problems, "; "))
	}
	return nil
}
