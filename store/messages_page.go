package store

// Chat read in pages, from the newest back to the first: the cursor is a
// message's seq, the page holds the messages before it (docs/http-api.md,
// GET /api/channels/:channelId/messages?before=).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// MessagesBefore reads at most limit messages of a document whose seq is
// below before, the newest of them, oldest first; more reports whether any
// older one is left.
func (s *Store) MessagesBefore(ctx context.Context, channelID string, before int64, limit int) (ms []Message, more bool, err error) {
	rows, err := s.read.QueryContext(ctx, `SELECT * FROM (
		SELECT id, channel_id, seq, role, author, text, status, created_at, updated_at, details
		FROM messages WHERE channel_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, channelID, before, limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, false, err
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("read messages: %w", err)
	}
	if len(ms) > limit {
		return ms[1:], true, nil
	}
	return ms, false, nil
}

// Message reads one message of a document.
func (s *Store) Message(ctx context.Context, channelID, id string) (Message, error) {
	row := s.read.QueryRowContext(ctx, `SELECT id, channel_id, seq, role, author, text, status, created_at, updated_at, details
		FROM messages WHERE channel_id = ? AND id = ?`, channelID, id)
	m, err := scanMessage(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, notFound("message-not-found", "no message of this document has the ID %s", id)
	}
	return m, err
}

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var details sql.NullString
	if err := row.Scan(&m.ID, &m.ChannelID, &m.Seq, &m.Role, &m.Author, &m.Text, &m.Status,
		&m.CreatedAt, &m.UpdatedAt, &details); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Message{}, err
		}
		return Message{}, fmt.Errorf("read message: %w", err)
	}
	if details.Valid {
		m.Details = json.RawMessage(details.String)
	}
	return m, nil
}
