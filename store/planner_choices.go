package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A document's Planner memory that outlives the process (migration 006):
// the model and level a person chose, and which reply answers which message.

// ModelChoice is a document's chosen model and thinking level, with the
// model's catalog name when chosen. FellBack is set once Chat recorded a
// turn falling back from it.
type ModelChoice struct {
	Model         string
	ThinkingLevel string
	ModelName     string
	FellBack      bool
}

// SaveModelChoice replaces a document's choice; the zero choice removes it.
func (s *Store) SaveModelChoice(ctx context.Context, channelID string, c ModelChoice) error {
	now := s.nowMS()
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if c == (ModelChoice{}) {
			_, err = tx.ExecContext(ctx, `DELETE FROM planner_model_choices WHERE channel_id = ?`, channelID)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO planner_model_choices (channel_id, model, thinking_level, model_name, fell_back, updated_at)
				VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (channel_id) DO UPDATE SET model = excluded.model, thinking_level = excluded.thinking_level,
					model_name = excluded.model_name, fell_back = excluded.fell_back, updated_at = excluded.updated_at`,
				channelID, c.Model, c.ThinkingLevel, c.ModelName, c.FellBack, now)
		}
		if err != nil {
			return fmt.Errorf("save model choice: %w", err)
		}
		return nil
	})
}

// MarkModelFellBack records that Chat said the choice of model and level
// fell back. It reports false when the saved choice is another one, or the
// fallback was already recorded, so the notice is said once.
func (s *Store) MarkModelFellBack(ctx context.Context, channelID, model, thinkingLevel string) (bool, error) {
	var marked bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE planner_model_choices SET fell_back = 1, updated_at = ?
			WHERE channel_id = ? AND model = ? AND thinking_level = ? AND fell_back = 0`,
			s.nowMS(), channelID, model, thinkingLevel)
		if err != nil {
			return fmt.Errorf("mark model fallback: %w", err)
		}
		n, _ := res.RowsAffected()
		marked = n == 1
		return nil
	})
	return marked, err
}

// ModelChoice reads a document's choice; ErrNotFound when it has none.
func (s *Store) ModelChoice(ctx context.Context, channelID string) (ModelChoice, error) {
	var c ModelChoice
	err := s.read.QueryRowContext(ctx, `SELECT model, thinking_level, model_name, fell_back FROM planner_model_choices WHERE channel_id = ?`,
		channelID).Scan(&c.Model, &c.ThinkingLevel, &c.ModelName, &c.FellBack)
	if errors.Is(err, sql.ErrNoRows) {
		return ModelChoice{}, notFound("model-choice-not-found", "no model was chosen for this document")
	}
	if err != nil {
		return ModelChoice{}, fmt.Errorf("read model choice: %w", err)
	}
	return c, nil
}

// SaveReplyTo records replyID as the latest Planner reply to a person's
// message, replacing an earlier attempt's.
func (s *Store) SaveReplyTo(ctx context.Context, channelID, messageID, replyID string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO planner_replies (channel_id, message_id, reply_id) VALUES (?, ?, ?)
			ON CONFLICT (channel_id, message_id) DO UPDATE SET reply_id = excluded.reply_id`, channelID, messageID, replyID)
		if err != nil {
			return fmt.Errorf("save reply link: %w", err)
		}
		return nil
	})
}

// ReplyTo reads the latest Planner reply recorded for a person's message;
// ErrNotFound when none was.
func (s *Store) ReplyTo(ctx context.Context, channelID, messageID string) (string, error) {
	var id string
	err := s.read.QueryRowContext(ctx, `SELECT reply_id FROM planner_replies WHERE channel_id = ? AND message_id = ?`,
		channelID, messageID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("reply-not-found", "no reply was recorded for the message %s", messageID)
	}
	if err != nil {
		return "", fmt.Errorf("read reply link: %w", err)
	}
	return id, nil
}
