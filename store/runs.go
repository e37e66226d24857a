package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Run cards of a document's Planner, kept until Chat stops showing them
// (migration 005). The store knows a card and a stage only as JSON; the app
// merges reports (spec "Run stage deltas") and says what changed.

// RunStage is one stage of a stored run: its ID, its place in the run from
// 0, and the stage as last reported.
type RunStage struct {
	ID       string
	Position int
	Body     json.RawMessage
}

// Run is one stored run: its card without stages, and every stage it has,
// in order.
type Run struct {
	ID     string
	Card   json.RawMessage
	Stages []RunStage
}

// RunUpdate is what one report changed of a run: its card, and either
// every stage (ReplaceStages) or only the stages it names, added or
// replaced by ID.
type RunUpdate struct {
	ID            string
	Card          json.RawMessage
	ReplaceStages bool
	Stages        []RunStage
}

// SaveRuns writes a report's changes in one transaction: each update (a new
// run goes after the document's others) and then the runs deleted, which
// take their stages with them.
func (s *Store) SaveRuns(ctx context.Context, channelID string, updates []RunUpdate, deleted []string) error {
	if len(updates) == 0 && len(deleted) == 0 {
		return nil
	}
	now := s.nowMS()
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, u := range updates {
			_, err := tx.ExecContext(ctx, `INSERT INTO planner_runs (channel_id, run_id, seq, card, updated_at)
				VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM planner_runs WHERE channel_id = ?1), ?3, ?4)
				ON CONFLICT (channel_id, run_id) DO UPDATE SET card = excluded.card, updated_at = excluded.updated_at`,
				channelID, u.ID, string(u.Card), now)
			if isForeignKeyError(err) {
				return notFound("channel-not-found", "no document has the ID %s", channelID)
			}
			if err != nil {
				return fmt.Errorf("save run: %w", err)
			}
			if u.ReplaceStages {
				if _, err := tx.ExecContext(ctx, `DELETE FROM planner_run_stages WHERE channel_id = ? AND run_id = ?`, channelID, u.ID); err != nil {
					return fmt.Errorf("save run stages: %w", err)
				}
			}
			for _, st := range u.Stages {
				if _, err := tx.ExecContext(ctx, `INSERT INTO planner_run_stages (channel_id, run_id, stage_id, position, body)
					VALUES (?, ?, ?, ?, ?)
					ON CONFLICT (channel_id, run_id, stage_id) DO UPDATE SET position = excluded.position, body = excluded.body`,
					channelID, u.ID, st.ID, st.Position, string(st.Body)); err != nil {
					return fmt.Errorf("save run stage: %w", err)
				}
			}
		}
		for _, id := range deleted {
			if _, err := tx.ExecContext(ctx, `DELETE FROM planner_runs WHERE channel_id = ? AND run_id = ?`, channelID, id); err != nil {
				return fmt.Errorf("delete run: %w", err)
			}
		}
		return nil
	})
}

// Runs reads a document's stored runs, first reported first, each with its
// stages in order.
func (s *Store) Runs(ctx context.Context, channelID string) ([]Run, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT run_id, card FROM planner_runs WHERE channel_id = ? ORDER BY seq`, channelID)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	var runs []Run
	at := map[string]int{}
	for rows.Next() {
		var r Run
		var card string
		if err := rows.Scan(&r.ID, &card); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read runs: %w", err)
		}
		r.Card = json.RawMessage(card)
		at[r.ID] = len(runs)
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `SELECT run_id, stage_id, position, body FROM planner_run_stages
		WHERE channel_id = ? ORDER BY run_id, position`, channelID)
	if err != nil {
		return nil, fmt.Errorf("read run stages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var run, body string
		var st RunStage
		if err := rows.Scan(&run, &st.ID, &st.Position, &body); err != nil {
			return nil, fmt.Errorf("read run stages: %w", err)
		}
		st.Body = json.RawMessage(body)
		if i, ok := at[run]; ok {
			runs[i].Stages = append(runs[i].Stages, st)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read run stages: %w", err)
	}
	return runs, nil
}
