package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
)

// A push's commit without database/sql's transaction. Every keystroke a
// browser pushes is one commit, and a sql.Tx costs it more than SQLite
// does: BeginTx starts a goroutine to watch the context, which Commit
// wakes, and each statement taken into the transaction is wrapped again.
// Measured beside the relay's one-row insert (docs/performance.md's
// history, `git log -p`), a push's rows in a sql.Tx took 1.6–1.7 times
// its CPU, and the same statements on a held connection between a
// prepared BEGIN IMMEDIATE and COMMIT about the same as it. So CommitPlan
// holds the write connection and runs its statements there, prepared once
// per connection; what it writes is what commitPlan writes in a sql.Tx,
// which the other callers (a transaction with more in it) still use.

// pushStmts are CommitPlan's statements, prepared on one driver connection.
type pushStmts struct {
	conn                      driver.Conn // the connection they belong to
	begin, commit, rollback   driver.Stmt
	advance, journal, history driver.Stmt
}

// pushCommits keeps each store's statements: at most one set, for the
// write connection in use (the pool replaces a broken one).
var pushCommits sync.Map // *Store → *pushStmts

func (s *Store) commitPush(ctx context.Context, channelID string, updates []PlanUpdate) error {
	if d := s.damage.Load(); d != nil {
		return d.refusal()
	}
	if len(updates) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx) // as inTx: a write begun ends whole
	conn, err := s.write.Conn(ctx)
	if err != nil {
		s.noteFailure(err)
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	var fnErr error
	err = conn.Raw(func(dc any) error {
		st, err := s.pushStatements(ctx, dc.(driver.Conn))
		if err != nil {
			return err
		}
		fnErr = s.runPush(ctx, st, channelID, updates)
		return nil
	})
	if err == nil {
		err = fnErr
	}
	if err != nil {
		s.noteFailure(err)
		return err
	}
	s.wrote()
	return nil
}

// pushStatements are the statements prepared on dc, preparing them when
// dc is not the connection the kept ones belong to.
func (s *Store) pushStatements(ctx context.Context, dc driver.Conn) (*pushStmts, error) {
	if v, ok := pushCommits.Load(s); ok && v.(*pushStmts).conn == dc {
		return v.(*pushStmts), nil
	}
	prep, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("prepare: the SQLite driver cannot prepare with a context")
	}
	st := &pushStmts{conn: dc}
	for _, p := range []struct {
		to  *driver.Stmt
		sql string
	}{
		{&st.begin, `BEGIN IMMEDIATE`},
		{&st.commit, `COMMIT`},
		{&st.rollback, `ROLLBACK`},
		{&st.advance, `UPDATE plans SET version = ?, updated_at = ? WHERE channel_id = ? AND version = ?`},
		{&st.journal, `INSERT INTO plan_journal (channel_id, version, client_id, changes) VALUES (?, ?, ?, ?)`},
		{&st.history, `INSERT INTO plan_history (channel_id, version, at, kind, author, turn, model, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
	} {
		stmt, err := prep.PrepareContext(ctx, p.sql)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*p.to = stmt
	}
	// Statements of a connection the pool let go of went with it.
	pushCommits.Store(s, st)
	return st, nil
}

// runPush is commitPlan's writes between BEGIN IMMEDIATE and COMMIT,
// rolled back on any error.
func (s *Store) runPush(ctx context.Context, st *pushStmts, channelID string, updates []PlanUpdate) error {
	if _, err := execStmt(ctx, st.begin); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := s.pushRows(ctx, st, channelID, updates); err != nil {
		if _, rerr := execStmt(ctx, st.rollback); rerr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if _, err := execStmt(ctx, st.commit); err != nil {
		// SQLite may leave the transaction open after a failed COMMIT
		// (SQLITE_BUSY); it must not be left for the next write.
		_, _ = execStmt(ctx, st.rollback)
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// pushRows writes what commitPlan writes.
func (s *Store) pushRows(ctx context.Context, st *pushStmts, channelID string, updates []PlanUpdate) error {
	first, last := updates[0].Version, updates[len(updates)-1].Version
	now := s.nowMS()
	res, err := execStmt(ctx, st.advance, last, now, channelID, first-1)
	if err != nil {
		return fmt.Errorf("advance plan version: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return conflict("plan-version-conflict", "the stored plan is not at version %d", first-1)
	}
	for i, u := range updates {
		if u.Version != first+int64(i) {
			return fmt.Errorf("commit plan: update %d has version %d, want %d", i, u.Version, first+int64(i))
		}
		if _, err := execStmt(ctx, st.journal, channelID, u.Version, u.ClientID, string(u.Changes)); err != nil {
			return fmt.Errorf("journal update %d: %w", u.Version, err)
		}
	}
	at := s.nowMS()
	for _, u := range updates {
		a := u.Author
		if _, err := execStmt(ctx, st.history, channelID, u.Version, at, historyKind(a), a.Name, a.Turn, a.Model, string(u.Changes)); err != nil {
			return fmt.Errorf("history of update %d: %w", u.Version, err)
		}
	}
	return nil
}

func execStmt(ctx context.Context, stmt driver.Stmt, args ...any) (driver.Result, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return stmt.(driver.StmtExecContext).ExecContext(ctx, named)
}

// close finalises the statements made so far.
func (st *pushStmts) close() {
	for _, stmt := range []driver.Stmt{st.begin, st.commit, st.rollback, st.advance, st.journal, st.history} {
		if stmt != nil {
			stmt.Close()
		}
	}
}

// closePushStatements finalises the store's push statements on the write
// connection, before it closes: a connection with statements left open
// does not close cleanly.
func (s *Store) closePushStatements() {
	v, ok := pushCommits.LoadAndDelete(s)
	if !ok {
		return
	}
	st := v.(*pushStmts)
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	conn, err := s.write.Conn(ctx) // after a write still under way
	if err != nil {                // left open: the file is checked whole at the next start
		return
	}
	defer conn.Close()
	_ = conn.Raw(func(dc any) error {
		if dc == st.conn {
			st.close()
		}
		return nil
	})
}
