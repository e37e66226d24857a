package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/chopin-desktop/chopin/fault"
)

// The check while Chopin runs, and what follows when it finds damage. A
// start after a clean stop no longer reads the whole file (stoprecord.go),
// so the whole check also runs in the background, on a schedule the app
// keeps: SQLite's quick_check one table (with its indexes) at a time, on a
// connection of its own that only reads, with a pause the caller chooses
// between tables. Each step is a read transaction of its own: in WAL mode
// it holds up no write, and between steps the log's checkpoints catch up.
//
// Once damage is found, by that check or by a write SQLite finds a damaged
// page under, the store refuses every write with storage-damaged (reads go
// on, so what is there can still be seen and copied), the app is told once
// (OnDamage), and Close leaves no record of a clean stop, so the next start
// checks the whole file and refuses it with what to do.

// Damage is what a check found wrong with the database.
type Damage struct {
	Found   string    // SQLite's words, its first few lines
	At      time.Time // when it was found
	Message string    // what happened and what to do, for a person
}

// refusal is a write's answer once the database is damaged.
func (d *Damage) refusal() error {
	return fault.Errorf(fault.StorageUnavailable, "storage-damaged", "This was not saved. %s", d.Message)
}

// Damage is the damage found in the database since it opened, or nil.
func (s *Store) Damage() *Damage { return s.damage.Load() }

// OnDamage sets what is told, once, when damage is first found. Set it
// before any check runs.
func (s *Store) OnDamage(fn func(Damage)) { s.onDamage.Store(&fn) }

// LastChecked is when the whole file was last checked and found sound (at
// a start or in the background, in this run or an earlier one); zero if
// never.
func (s *Store) LastChecked() time.Time {
	if ms := s.checked.Load(); ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// markDamaged records found as the database's damage, unless damage was
// found before, and tells OnDamage.
func (s *Store) markDamaged(found string) {
	dir, name := filepath.Dir(s.path), filepath.Base(s.path)
	d := &Damage{Found: found, At: time.Now(), Message: fmt.Sprintf(
		"Chopin found damage in its database (%s in %s) and saves no more changes, so that nothing is lost on top of it; "+
			"what is saved can still be read and copied. To go on, quit Chopin and copy the folder %s somewhere safe. "+
			"Then restore a backup: put the backup in place of %s (delete %s-wal and %s-shm beside it if they are there) and start Chopin. "+
			"Without a backup, `sqlite3 %s .recover | sqlite3 recovered.db` recovers what it can: put recovered.db in place of %s.",
		name, dir, dir, name, name, name, name, name)}
	if !s.damage.CompareAndSwap(nil, d) {
		return
	}
	if fn := s.onDamage.Load(); fn != nil {
		(*fn)(*d)
	}
}

// noteFailure remembers what a failed write says of the file: damage is
// marked, and any storage failure (an I/O error) means the next start
// checks the whole file whatever the stop.
func (s *Store) noteFailure(err error) {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		s.unsound.Store(true)
		s.markDamaged(err.Error())
	case sqlite3.SQLITE_IOERR:
		s.unsound.Store(true)
	}
}

// verifyPragmas are the check's own connection's: it only reads, and its
// pages are neither kept nor mapped (a check reads the whole file once and
// must not leave it in the process's memory).
const verifyPragmas = "_pragma=query_only(1)&_pragma=cache_size(-512)&_pragma=mmap_size(0)"

// Verify runs SQLite's quick_check over the whole database, one table and
// its indexes at a time, and calls pause between tables with how long the
// last one took; an error from pause ends the check with that error. It
// returns the damage found (also kept, see Damage), or nil when the file
// is sound. An error is a check that could not finish, which says nothing
// of the file.
//
// The check runs in the calling goroutine (the driver is pure Go), so a
// caller can run it on a thread of low priority.
func (s *Store) Verify(ctx context.Context, pause func(took time.Duration) error) (*Damage, error) {
	if d := s.Damage(); d != nil {
		return d, nil
	}
	db, err := openDB(s.path, verifyPragmas, 1, true)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tables := []string{"sqlite_schema"}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND rootpage > 0 ORDER BY rootpage`)
	if err != nil {
		return s.verifyFailed(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return s.verifyFailed(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		return s.verifyFailed(err)
	}
	started := time.Now()
	for i, table := range tables {
		if i > 0 {
			if err := pause(time.Since(started)); err != nil {
				return nil, err
			}
			started = time.Now()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		found, err := quickCheck(ctx, db, `PRAGMA quick_check('`+strings.ReplaceAll(table, "'", "''")+`')`)
		if err != nil {
			return s.verifyFailed(fmt.Errorf("table %s: %w", table, err))
		}
		if found != "" {
			s.markDamaged("table " + table + ": " + found)
			return s.Damage(), nil
		}
	}
	s.checked.Store(time.Now().UnixMilli())
	return nil, nil
}

// verifyFailed is a check that could not go on: damage when SQLite says
// the file is damaged, else an error.
func (s *Store) verifyFailed(err error) (*Damage, error) {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		s.markDamaged(err.Error())
		return s.Damage(), nil
	}
	return nil, fmt.Errorf("check the database: %w", err)
}

// quickCheck runs a quick_check pragma and returns what it found wrong,
// its first three lines, or "" for a sound file. SQLite may end a report
// of damage with an error: the report comes with it, in the error.
func quickCheck(ctx context.Context, db *sql.DB, query string) (string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		if len(found) < 3 {
			found = append(found, line)
		}
	}
	if err := rows.Err(); err != nil {
		if len(found) > 0 {
			return "", fmt.Errorf("%s; %w", strings.Join(found, "; "), err)
		}
		return "", err
	}
	if len(found) == 1 && found[0] == "ok" {
		return "", nil
	}
	return strings.Join(found, "; "), nil
}
