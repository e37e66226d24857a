package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// A plan's history (migration 018): every accepted change, with its author
// and time, written in the transaction that commits it (commitPlan), and the
// plan's full text at some versions (plan_snapshots), which the versions
// after them are rebuilt from. Detail beyond the retention window is pruned
// to snapshots in the background (PruneHistory); the journal, the recovery
// tail, is not touched by any of it.

// historySnapshotEvery is how many versions may follow the newest snapshot
// before a checkpoint writes another: it bounds how many changes rebuilding
// a version applies.
const historySnapshotEvery = 1000

// PlanAuthor is who made a change: its kind (person, planner, mcp, import,
// restore, revert, server), a person's login or an MCP client's name, and for the
// Planner its turn and model when known.
type PlanAuthor struct {
	Kind  string
	Name  string
	Turn  string
	Model string
}

// HistoryEntry is one kept version.
type HistoryEntry struct {
	Version int64
	At      int64 // unix milliseconds
	Author  PlanAuthor
	Changes json.RawMessage // nil when only a snapshot keeps this version
}

// historyKind is the stored kind of an author: an update without one is
// the server's.
func historyKind(a PlanAuthor) string {
	switch a.Kind {
	case "person", "planner", "mcp", "import", "restore", "revert", "server":
		return a.Kind
	}
	return "server"
}

// History reads a page of a document's kept versions, newest first: those
// before the version before (all when before <= 0), at most limit.
func (s *Store) History(ctx context.Context, channelID string, before int64, limit int) ([]HistoryEntry, error) {
	if before <= 0 {
		before = 1<<62 - 1
	}
	return queryHistory(ctx, s.read, `SELECT `+historyColumns+` FROM plan_history
		WHERE channel_id = ? AND version < ? ORDER BY version DESC LIMIT ?`, channelID, before, limit)
}

// historyColumns are the columns a HistoryEntry is read from, in the order
// queryHistory scans them.
const historyColumns = `version, at, kind, author, turn, model, changes`

// queryHistory runs q, a SELECT of historyColumns from plan_history, on db
// (the read pool or a transaction), and reads its rows in order.
func queryHistory(ctx context.Context, db interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, q string, args ...any) ([]HistoryEntry, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	var out []HistoryEntry
	for rows.Next() {
		var e HistoryEntry
		var changes sql.NullString
		if err := rows.Scan(&e.Version, &e.At, &e.Author.Kind, &e.Author.Name, &e.Author.Turn, &e.Author.Model, &changes); err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		if changes.Valid {
			e.Changes = json.RawMessage(changes.String)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return out, nil
}

// HistoryBase is what rebuilds a version: the newest snapshot at or before
// it and the kept changes after the snapshot, through the version, oldest
// first. Found is false when no snapshot precedes the version.
type HistoryBase struct {
	Found    bool
	Version  int64 // the snapshot's
	Source   string
	Changes  []HistoryEntry
	Snapshot bool // the version itself has a snapshot
}

// HistoryBaseOf reads what rebuilds version.
func (s *Store) HistoryBaseOf(ctx context.Context, channelID string, version int64) (HistoryBase, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return HistoryBase{}, err
	}
	defer tx.Rollback()
	var b HistoryBase
	err = tx.QueryRowContext(ctx, `SELECT version, source FROM plan_snapshots WHERE channel_id = ? AND version <= ?
		ORDER BY version DESC LIMIT 1`, channelID, version).Scan(&b.Version, &b.Source)
	if errors.Is(err, sql.ErrNoRows) {
		return b, nil
	}
	if err != nil {
		return b, fmt.Errorf("read history snapshot: %w", err)
	}
	b.Found, b.Snapshot = true, b.Version == version
	b.Changes, err = queryHistory(ctx, tx, `SELECT `+historyColumns+` FROM plan_history
		WHERE channel_id = ? AND version > ? AND version <= ? ORDER BY version`, channelID, b.Version, version)
	return b, err
}

// HistoryNeighbours are the kept versions nearest to version: the newest
// before it and the oldest after it, 0 when there is none.
func (s *Store) HistoryNeighbours(ctx context.Context, channelID string, version int64) (before, after int64, err error) {
	err = s.read.QueryRowContext(ctx, `SELECT
		coalesce((SELECT max(version) FROM plan_history WHERE channel_id = ?1 AND version < ?2), 0),
		coalesce((SELECT min(version) FROM plan_history WHERE channel_id = ?1 AND version > ?2), 0)`,
		channelID, version).Scan(&before, &after)
	if err != nil {
		err = fmt.Errorf("read history: %w", err)
	}
	return before, after, err
}

// writeHistory records updates, just journaled, in the history.
func (s *Store) writeHistory(ctx context.Context, tx *sql.Tx, channelID string, updates []PlanUpdate) error {
	at := s.nowMS()
	st := tx.StmtContext(ctx, s.historyPlan)
	for _, u := range updates {
		a := u.Author
		if _, err := st.ExecContext(ctx, channelID, u.Version, at, historyKind(a), a.Name, a.Turn, a.Model, string(u.Changes)); err != nil {
			return fmt.Errorf("history of update %d: %w", u.Version, err)
		}
	}
	return nil
}

// snapshotHistory keeps the checkpoint's text as a history snapshot when the
// plan had none, its history was replaced (a new epoch), or
// historySnapshotEvery versions followed the newest one.
func snapshotHistory(ctx context.Context, tx *sql.Tx, channelID string, cp PlanCheckpoint, epoch sql.NullString, at int64) error {
	var newest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM plan_snapshots WHERE channel_id = ?`, channelID).Scan(&newest); err != nil {
		return fmt.Errorf("history snapshot: %w", err)
	}
	replaced := epoch.Valid && epoch.String != cp.Epoch
	if newest.Valid && !replaced && cp.Version-newest.Int64 < historySnapshotEvery {
		return nil
	}
	if replaced {
		// A replaced history continues from this text: what the old one
		// held past it never happened in the new one.
		if _, err := tx.ExecContext(ctx, `DELETE FROM plan_history WHERE channel_id = ? AND version > ?`, channelID, cp.Version); err != nil {
			return fmt.Errorf("history snapshot: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM plan_snapshots WHERE channel_id = ? AND version > ?`, channelID, cp.Version); err != nil {
			return fmt.Errorf("history snapshot: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO plan_snapshots (channel_id, version, source) VALUES (?, ?, ?)
		ON CONFLICT (channel_id, version) DO UPDATE SET source = excluded.source`, channelID, cp.Version, cp.Source); err != nil {
		return fmt.Errorf("history snapshot: %w", err)
	}
	// The version is listed even when no change made it (a new plan's first
	// text, a replaced history's start).
	if _, err := tx.ExecContext(ctx, `INSERT INTO plan_history (channel_id, version, at, kind) VALUES (?, ?, ?, 'server')
		ON CONFLICT DO NOTHING`, channelID, cp.Version, at); err != nil {
		return fmt.Errorf("history snapshot: %w", err)
	}
	return nil
}

// HistoryPolicy is how much history a document keeps: every change for
// DetailDays days, but at most DetailChanges changes; beyond them one
// snapshot per SnapshotEvery milliseconds, at most Snapshots of them.
type HistoryPolicy struct {
	DetailDays    int
	DetailChanges int
	SnapshotEvery int64 // milliseconds
	Snapshots     int
}

// HistoryPrune is what pruning a document's history keeps, as the caller
// worked it out (app/history.go): of the versions through Through, only
// Keep stay, each with its whole text (Snapshots) or a step from the kept
// version before it (Steps); the rest go, with their changes and
// snapshots.
type HistoryPrune struct {
	Through   int64
	Keep      []int64
	Snapshots map[int64]string
	Steps     map[int64]json.RawMessage // HistoryStep JSON
}

// HistoryStep is a pruned version's change: the comparison of its text with
// the text of version From, the kept version before it. Stored in
// plan_history.changes as {"from": N, "changes": [...]}, which no change
// set (a JSON array) is mistaken for.
type HistoryStep struct {
	From    int64           `json:"from"`
	Changes json.RawMessage `json:"changes"`
}

// JSON is the step as stored.
func (h HistoryStep) JSON() json.RawMessage {
	js, _ := json.Marshal(h) // an integer and JSON always encode
	return js
}

// ParseHistoryStep reads a stored change that is a step.
func ParseHistoryStep(changes json.RawMessage) (HistoryStep, bool) {
	var h HistoryStep
	if len(changes) == 0 || changes[0] != '{' || json.Unmarshal(changes, &h) != nil || h.Changes == nil {
		return HistoryStep{}, false
	}
	return h, true
}

// HistoryToPrune reads, for pruning, the documents with changes to prune
// under policy: each with the newest version whose detail goes.
func (s *Store) HistoryToPrune(ctx context.Context, policy HistoryPolicy) (map[string]int64, error) {
	cutoff := s.nowMS() - int64(policy.DetailDays)*86_400_000
	rows, err := s.read.QueryContext(ctx, `SELECT h.channel_id, max(h.version) FROM plan_history h
		JOIN (SELECT channel_id, max(version) AS newest FROM plan_history GROUP BY channel_id) n USING (channel_id)
		WHERE substr(h.changes, 1, 1) = '[' AND (h.at < ? OR h.version <= n.newest - ?)
		GROUP BY h.channel_id`, cutoff, policy.DetailChanges)
	if err != nil {
		return nil, fmt.Errorf("read history to prune: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, fmt.Errorf("read history to prune: %w", err)
		}
		out[id] = v
	}
	return out, rows.Err()
}

// PruneHistory applies p in one transaction.
func (s *Store) PruneHistory(ctx context.Context, channelID string, p HistoryPrune) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		keep, _ := json.Marshal(p.Keep)
		snaps := make([]int64, 0, len(p.Snapshots))
		for v := range p.Snapshots {
			snaps = append(snaps, v)
		}
		keepSnaps, _ := json.Marshal(snaps)
		for _, q := range []struct {
			sql string
			arg string
		}{
			{`DELETE FROM plan_history WHERE channel_id = ? AND version <= ? AND version NOT IN (SELECT value FROM json_each(?))`, string(keep)},
			{`DELETE FROM plan_snapshots WHERE channel_id = ? AND version <= ? AND version NOT IN (SELECT value FROM json_each(?))`, string(keepSnaps)},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, channelID, p.Through, q.arg); err != nil {
				return fmt.Errorf("prune history: %w", err)
			}
		}
		for v, src := range p.Snapshots {
			if _, err := tx.ExecContext(ctx, `INSERT INTO plan_snapshots (channel_id, version, source) VALUES (?, ?, ?)
				ON CONFLICT (channel_id, version) DO UPDATE SET source = excluded.source`, channelID, v, src); err != nil {
				return fmt.Errorf("prune history: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE plan_history SET changes = NULL WHERE channel_id = ? AND version = ?`, channelID, v); err != nil {
				return fmt.Errorf("prune history: %w", err)
			}
		}
		for v, step := range p.Steps {
			if _, err := tx.ExecContext(ctx, `UPDATE plan_history SET changes = ? WHERE channel_id = ? AND version = ?`, string(step), channelID, v); err != nil {
				return fmt.Errorf("prune history: %w", err)
			}
		}
		return nil
	})
}

// HistoryBytes is how many bytes the history's tables and their indexes
// take in the database file, all documents together (for the benchmark of
// its growth, and reports).
func (s *Store) HistoryBytes(ctx context.Context) (int64, error) {
	var n sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT sum(pgsize) FROM dbstat
		WHERE name IN ('plan_history', 'plan_snapshots', 'sqlite_autoindex_plan_snapshots_1')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("measure the history: %w", err)
	}
	return n.Int64, nil
}
