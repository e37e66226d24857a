package store

import (
	"context"
	"database/sql"
	"fmt"
)

// LinkHold is a resumable agent link's kept work for one document, as the
// agent connection wrote it (planner_link_holds). Body is opaque here.
type LinkHold struct {
	ChannelID string
	Login     string
	Window    bool   // the next process gives the client its hand-over window
	Body      []byte // JSON
}

// SaveLinkHold writes the document's hold, replacing any earlier one.
func (s *Store) SaveLinkHold(ctx context.Context, h LinkHold) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO planner_link_holds (channel_id, login, handover, body, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (channel_id) DO UPDATE SET login = excluded.login, handover = excluded.handover,
				body = excluded.body, updated_at = excluded.updated_at`,
			h.ChannelID, h.Login, h.Window, string(h.Body), s.nowMS())
		if err != nil {
			return fmt.Errorf("save link hold: %w", err)
		}
		return nil
	})
}

// DeleteLinkHold removes the document's hold, if it has one.
func (s *Store) DeleteLinkHold(ctx context.Context, channelID string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM planner_link_holds WHERE channel_id = ?`, channelID); err != nil {
			return fmt.Errorf("delete link hold: %w", err)
		}
		return nil
	})
}

// LinkHolds reads every stored hold, oldest first.
func (s *Store) LinkHolds(ctx context.Context) ([]LinkHold, error) {
	var out []LinkHold
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT channel_id, login, handover, body FROM planner_link_holds ORDER BY updated_at, channel_id`)
		if err != nil {
			return fmt.Errorf("read link holds: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var h LinkHold
			var body string
			if err := rows.Scan(&h.ChannelID, &h.Login, &h.Window, &body); err != nil {
				return fmt.Errorf("read link holds: %w", err)
			}
			h.Body = []byte(body)
			out = append(out, h)
		}
		return rows.Err()
	})
	return out, err
}
