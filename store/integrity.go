package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/chopin-desktop/chopin/fault"
)

// The database's integrity at start and its storage failures at run time.
// A database that existed is never replaced by an empty one; a damaged or
// unwritable one stops start-up with what to do (read whole only when the
// last stop was not clean, stoprecord.go; checked in the background while
// Chopin runs, verify.go); and at run time a full
// disk or a failing one is a refusal of its own kind, with a plain
// message, rather than a generic internal error. SQLite's transactions
// keep what failed from being half-written.

// StartupError is a reason the database cannot be opened that the person
// must act on; Error is the whole message, saying what to do.
type StartupError struct{ Message string }

func (e *StartupError) Error() string { return e.Message }

// checkFile refuses a database file that cannot be opened safely, before
// SQLite touches it: a zero-byte file beside a write-ahead log that holds
// data (SQLite would start afresh and discard the log), and a file without
// write permission.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return createPrivate(path)
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	name, dir := filepath.Base(path), filepath.Dir(path)
	if wal, err := os.Stat(path + "-wal"); fi.Size() == 0 && err == nil && wal.Size() > 0 {
		return &StartupError{Message: fmt.Sprintf("%s in %s is empty (0 bytes) but its write-ahead log %s-wal holds %d bytes: "+
			"the database file was cut short, and starting would replace your plans with an empty database. "+
			"Chopin has changed neither file. Restore %s from a backup of the folder (keep %s-wal beside it) and start Chopin again.",
			name, dir, name, wal.Size(), name, name)}
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return unwritable(path, "it is read-only")
	}
	return nil
}

// createPrivate makes the new database file readable by its owner alone
// (0600) whatever the umask or the folder: SQLite would create it 0644, and
// gives its -wal and -shm files the database file's mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

func unwritable(path, why string) error {
	return &StartupError{Message: fmt.Sprintf("%s in %s cannot be written (%s), so Chopin could save nothing. "+
		"Give your user write permission on the file and its folder (chmod u+w), then start Chopin again.",
		filepath.Base(path), filepath.Dir(path), why)}
}

func damaged(path, found string) error {
	return &StartupError{Message: fmt.Sprintf("%s in %s is damaged (SQLite's check found: %s). Chopin has not changed it. "+
		"Copy the folder somewhere safe first; then restore %s from a backup, or recover what it holds with "+
		"`sqlite3 %s .recover | sqlite3 recovered.db` and put recovered.db in its place.",
		filepath.Base(path), filepath.Dir(path), found, filepath.Base(path), filepath.Base(path))}
}

// checkDatabase runs SQLite's quick check when whole is set (a start that
// cannot trust the file, stoprecord.go) and always a write that is rolled
// back, so a damaged or unwritable database stops start-up instead of
// failing reads and writes later.
func checkDatabase(ctx context.Context, db *sql.DB, path string, whole bool, trace *Opening) error {
	if whole {
		found, err := quickCheck(ctx, db, `PRAGMA quick_check`)
		if err != nil {
			return openFailure(path, err)
		}
		if found != "" {
			return damaged(path, found)
		}
	}
	trace.step("check")
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return openFailure(path, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return openFailure(path, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v)); err != nil {
		return openFailure(path, err)
	}
	trace.step("write-check")
	return nil
}

// openFailure says why the database could not be opened, in the person's
// terms when SQLite's code says it.
func openFailure(path string, err error) error {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return damaged(path, err.Error())
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return unwritable(path, err.Error())
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// sqliteCode is the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// The refusals of a storage failure at run time.
var (
	errStorageFull = fault.Errorf(fault.StorageFull, "storage-full",
		"The disk Chopin keeps its data on is full, so this was not saved. Nothing was half-written: free some space and try again.")
	errStorageUnavailable = fault.Errorf(fault.StorageUnavailable, "storage-unavailable",
		"Chopin could not read or write its database just now (the disk reported an error), so this was not done. "+
			"Nothing was half-written: check the disk, then try again or restart Chopin.")
)

// StorageFault is err as a storage refusal when SQLite failed for the
// disk's sake (full, an I/O error, a damaged or read-only file), wrapping
// err for the log; otherwise nil.
func StorageFault(err error) error {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w (%w)", errStorageFull, err)
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
		return fmt.Errorf("%w (%w)", errStorageUnavailable, err)
	}
	return nil
}
