package store

import (
	"context"
	"fmt"
)

// What a revert reads of a plan's history (app/revert.go): the kept
// changes of a span of versions, and the versions of a Planner turn.

// HistoryChanges reads the kept versions from through to, oldest first,
// each with its change as stored (nil when only a snapshot keeps it, a
// HistoryStep's JSON once pruned).
func (s *Store) HistoryChanges(ctx context.Context, channelID string, from, to int64) ([]HistoryEntry, error) {
	return queryHistory(ctx, s.read, `SELECT `+historyColumns+` FROM plan_history
		WHERE channel_id = ? AND version >= ? AND version <= ? ORDER BY version`, channelID, from, to)
}

// HistoryTurn reads the versions a Planner turn made, oldest first.
func (s *Store) HistoryTurn(ctx context.Context, channelID, turn string) ([]int64, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT version FROM plan_history
		WHERE channel_id = ? AND turn = ? AND turn <> '' ORDER BY version`, channelID, turn)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
