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
// restore, server), a person's login or an MCP client's name, and for the
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
	case "person", "planner", "mcp", "import", "restore", "server":
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
	rows, err := s.read.QueryContext(ctx, `SELECT version, at, kind, author, turn, model, changes FROM plan_history
		WHERE channel_id = ? AND version < ? ORDER BY version DESC LIMIT ?`, channelID, before, limit)
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
	return out, rows.Err()
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
	rows, err := tx.QueryContext(ctx, `SELECT version, at, kind, author, turn, model, changes FROM plan_history
		WHERE channel_id = ? AND version > ? AND version <= ? ORDER BY version`, channelID, b.Version, version)
	if err != nil {
		return b, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e HistoryEntry
		var changes sql.NullString
		if err := rows.Scan(&e.Version, &e.At, &e.Author.Kind, &e.Author.Name, &e.Author.Turn, &e.Author.Model, &changes); err != nil {
			return b, fmt.Errorf("read history: %w", err)
		}
		if changes.Valid {
			e.Changes = json.RawMessage(changes.String)
		}
		b.Changes = append(b.Changes, e)
	}
	return b, rows.Err()
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

// HistoryPrune is what pruning a document's history keeps and drops, as
// the caller worked it out (app/history.go): snapshots to write, and every
// version at or before Through, other than Keep, to drop with its change.
type HistoryPrune struct {
	Snapshots           map[int64]string // version: text
	Through             int64
	Keep                []int64 // versions at or before Through that stay listed (each has a snapshot)
	DropSnapshotsBefore int64   // snapshots older than this version go (0: none)
}

// HistoryToPrune reads, for pruning, the documents with changes to prune
// under policy: each with the newest version whose detail goes.
func (s *Store) HistoryToPrune(ctx context.Context, policy HistoryPolicy) (map[string]int64, error) {
	cutoff := s.nowMS() - int64(policy.DetailDays)*86_400_000
	rows, err := s.read.QueryContext(ctx, `SELECT h.channel_id, max(h.version) FROM plan_history h
		JOIN (SELECT channel_id, max(version) AS newest FROM plan_history GROUP BY channel_id) n USING (channel_id)
		WHERE h.changes IS NOT NULL AND (h.at < ? OR h.version <= n.newest - ?)
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

// PruneHistory writes p's snapshots and drops the detail it lets go, in one
// transaction.
func (s *Store) PruneHistory(ctx context.Context, channelID string, p HistoryPrune) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for v, src := range p.Snapshots {
			if _, err := tx.ExecContext(ctx, `INSERT INTO plan_snapshots (channel_id, version, source) VALUES (?, ?, ?)
				ON CONFLICT (channel_id, version) DO UPDATE SET source = excluded.source`, channelID, v, src); err != nil {
				return fmt.Errorf("prune history: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE plan_history SET changes = NULL WHERE channel_id = ? AND version <= ?`,
			channelID, p.Through); err != nil {
			return fmt.Errorf("prune history: %w", err)
		}
		keep, _ := json.Marshal(p.Keep)
		if _, err := tx.ExecContext(ctx, `DELETE FROM plan_history WHERE channel_id = ? AND version <= ?
			AND version NOT IN (SELECT value FROM json_each(?))`, channelID, p.Through, string(keep)); err != nil {
			return fmt.Errorf("prune history: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM plan_snapshots WHERE channel_id = ? AND version <= ?
			AND version NOT IN (SELECT value FROM json_each(?))`, channelID, p.Through, string(keep)); err != nil {
			return fmt.Errorf("prune history: %w", err)
		}
		if p.DropSnapshotsBefore > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM plan_history WHERE channel_id = ? AND version < ?`, channelID, p.DropSnapshotsBefore); err != nil {
				return fmt.Errorf("prune history: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM plan_snapshots WHERE channel_id = ? AND version < ?`, channelID, p.DropSnapshotsBefore); err != nil {
				return fmt.Errorf("prune history: %w", err)
			}
		}
		return nil
	})
}
