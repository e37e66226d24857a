package store

// This file opens the database: the DSN's settings, the write connection
// and the read pool, and the embedded migrations.

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is the SQLite database of one Chopin data directory.
type Store struct {
	write *sql.DB // one connection: SQLite has one writer anyway
	read  *sql.DB // a small pool of read-only connections
	now   func() time.Time
	path  string // the database file

	// Statements on the hot path of every edit, prepared once: preparing
	// them anew would cost more than the rest of the transaction's CPU.
	advancePlan *sql.Stmt
	journalPlan *sql.Stmt
	historyPlan *sql.Stmt

	// The catalog index's merging (search.go): a write asks, tidyCatalog
	// merges; closing stops it and tidied says it has.
	catalogWritten chan struct{}
	closing        chan struct{}
	closeOnce      sync.Once
	tidied         chan struct{}

	// The log's checkpoints (wal.go): every walCheckpointEvery writes,
	// walGrew asks checkpointWAL; walCheckpointed is how many writes came
	// before the last checkpoint began, and walDone says it has stopped.
	writes          atomic.Int64
	walGrew         chan struct{}
	walCheckpointed atomic.Int64
	walDone         chan struct{}

	// The file's soundness (stoprecord.go, verify.go): how it was opened,
	// when it was last checked whole (Unix ms), the damage found since, who
	// hears of it, and whether a failure means the next start must check
	// the whole file whatever the stop.
	opening  Opening
	checked  atomic.Int64
	damage   atomic.Pointer[Damage]
	onDamage atomic.Pointer[func(Damage)]
	unsound  atomic.Bool
	closeErr error // Close's answer, made once

	readerOpen chan struct{} // closed by connectReader
}

// Open opens (creating if needed) the database at path and brings its schema
// up to date. A database written by a newer Chopin is refused rather than
// guessed at. The whole file is checked only when the last stop was not
// clean or the file changed since (stoprecord.go); Opening says which, and
// how long each step took.
func Open(ctx context.Context, path string) (*Store, error) {
	trace := &Opening{last: time.Now()}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	trace.step("file")
	rec, clean, why := takeStopRecord(path)
	trace.FullCheck, trace.Why = !clean, why
	trace.step("record")
	write, err := openDB(path, "_txlock=immediate&"+walPragmas, 1, true)
	if err != nil {
		return nil, openFailure(path, errors.Unwrap(err))
	}
	trace.step("connect")
	if err := checkDatabase(ctx, write, path, !clean, trace); err != nil {
		write.Close()
		return nil, err
	}
	if err := migrate(ctx, write, path); err != nil {
		write.Close()
		return nil, err
	}
	trace.step("migrate")
	// The read pool's first connection opens beside the rest of the start
	// (connectReader): a start that answers /healthz first need not wait
	// for it.
	read, err := openDB(path, readPragmas, 4, false)
	if err != nil {
		write.Close()
		return nil, err
	}
	trace.step("read-pool")
	s := &Store{write: write, read: read, now: time.Now, path: path,
		catalogWritten: make(chan struct{}, 1), closing: make(chan struct{}), tidied: make(chan struct{}),
		walGrew: make(chan struct{}, 1), walDone: make(chan struct{}), readerOpen: make(chan struct{})}
	if clean {
		s.checked.Store(rec.Checked)
	} else {
		s.checked.Store(time.Now().UnixMilli())
	}
	// Merge the catalog index once the start is over, in case the last run
	// stopped before it did.
	s.catalogWritten <- struct{}{}
	go s.tidyCatalog()
	go s.checkpointWAL()
	go s.connectReader()
	if err := s.prepare(ctx); err != nil {
		s.unsound.Store(true) // not opened: no record of a clean stop
		s.Close()
		return nil, err
	}
	trace.step("prepare")
	s.opening = *trace
	return s, nil
}

// connectReader opens the read pool's first connection and leaves it idle,
// so the first read (a signed-in page's session, the job runner's open
// jobs) does not wait a millisecond for SQLite to open the file and read
// its schema.
func (s *Store) connectReader() {
	defer close(s.readerOpen)
	if c, err := s.read.Conn(context.Background()); err == nil {
		c.Close()
	}
}

// ReaderOpen is closed once the read pool's first connection is open (or
// failed to open): a reader that can wait for it shares it rather than
// opening a second one beside it.
func (s *Store) ReaderOpen() <-chan struct{} { return s.readerOpen }

func (s *Store) prepare(ctx context.Context) error {
	var err error
	if s.advancePlan, err = s.write.PrepareContext(ctx,
		`UPDATE plans SET version = ?, updated_at = ? WHERE channel_id = ? AND version = ?`); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	if s.journalPlan, err = s.write.PrepareContext(ctx,
		`INSERT INTO plan_journal (channel_id, version, client_id, changes) VALUES (?, ?, ?, ?)`); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	if s.historyPlan, err = s.write.PrepareContext(ctx,
		`INSERT INTO plan_history (channel_id, version, at, kind, author, turn, model, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

// readPragmas size the read pool for the catalog: each connection keeps up
// to 4 MiB of pages of its own and maps up to 256 MiB of the file, so a
// listing or a search reads the indexes it needs from memory rather than
// with one pread per page (SQLite's default cache is 2 MiB per connection,
// and no mapping).
const readPragmas = "_pragma=query_only(1)&_pragma=cache_size(-4096)&_pragma=mmap_size(268435456)"

// openDB makes a pool of conns connections to the database at path; with
// connect, it opens one at once, so an error in opening comes now.
func openDB(path, extra string, conns int, connect bool) (*sql.DB, error) {
	// busy_timeout comes first so that it already applies to the pragmas after it.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&" + extra
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(0)
	if !connect {
		return db, nil
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// SetClock replaces the store's clock; tests use it to control timestamps.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Close closes both pools, once; then, unless the file is damaged or a
// write failed for the disk's sake, it records the clean stop, which lets
// the next start skip the whole check (stoprecord.go).
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		<-s.tidied
		<-s.walDone
		<-s.readerOpen
		for _, st := range []*sql.Stmt{s.advancePlan, s.journalPlan, s.historyPlan} {
			if st != nil {
				st.Close()
			}
		}
		s.closePushStatements()
		s.closeErr = errors.Join(s.read.Close(), s.write.Close())
		if s.closeErr == nil && s.damage.Load() == nil && !s.unsound.Load() && s.closedAll(closeWait) {
			// Not written, the next start checks the whole file: slower,
			// never wrong.
			_ = writeStopRecord(s.path, s.LastChecked())
		}
	})
	return s.closeErr
}

// closeWait bounds how long Close waits for a statement under way.
const closeWait = 5 * time.Second

// closedAll waits, at most wait, for the connections still in use when the
// pools closed (a request's last statement) to end. The last connection
// to close copies the write-ahead log into the file and removes it.
func (s *Store) closedAll(wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for s.read.Stats().OpenConnections+s.write.Stats().OpenConnections > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

func (s *Store) nowMS() int64 { return s.now().UnixMilli() }

// inTx runs fn in one immediate write transaction. The caller going away
// does not cut a write off half way: writes are short, and one begun
// commits or rolls back whole. (A context that can end also costs the
// driver a goroutine per statement, to interrupt it.)
func (s *Store) inTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if d := s.damage.Load(); d != nil {
		return d.refusal()
	}
	ctx = context.WithoutCancel(ctx)
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		s.noteFailure(err)
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(ctx, tx); err != nil {
		tx.Rollback()
		s.noteFailure(err)
		return err
	}
	if err := tx.Commit(); err != nil {
		s.noteFailure(err)
		return fmt.Errorf("commit: %w", err)
	}
	s.wrote()
	return nil
}

// migration is one numbered .sql file.
type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected number %d", m.name, i+1)
		}
	}
	return ms, nil
}

// ErrNewerSchema is returned by Open for a database that a newer Chopin wrote.
var ErrNewerSchema = errors.New("database was written by a newer version of Chopin")

// migrate brings the schema up to date. A database of an earlier schema is
// first copied beside itself, as chopin.db.before-schema-N (N the schema it
// is upgraded to), so an upgrade that goes wrong loses nothing.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > len(ms) {
		return fmt.Errorf("%w (schema %d; this Chopin knows schema %d): install the newer Chopin, or point CHOPIN_DATA_DIR at another directory",
			ErrNewerSchema, current, len(ms))
	}
	if current > 0 && current < len(ms) {
		dest := fmt.Sprintf("%s.before-schema-%d", path, len(ms))
		if _, err := os.Lstat(dest); err == nil {
			// A migration to this schema was tried before and failed: keep
			// the copy of the database as it was before that first try.
		} else if err := vacuumInto(ctx, db, dest); err != nil {
			return fmt.Errorf("back up the database before upgrading its schema: %w", err)
		}
	}
	for _, m := range ms[current:] {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}
