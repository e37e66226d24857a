package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Reference is one document a Chat message refers to (`#` references): as
// the message kept it when it was sent.
type Reference struct {
	ChannelID        string // the document referred to
	Label            string // its title then
	ObservedRevision int64
	ObservedHash     string
	CreatedAt        int64  // when the message was sent, unix ms
	MessageID        string // the message that refers to it
}

// SaveMessageReferences saves a message, as SaveMessage does, and the
// documents it refers to, in one transaction. A message saved again keeps
// the references it was first saved with.
func (s *Store) SaveMessageReferences(ctx context.Context, m Message, refs []Reference) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := saveMessage(ctx, tx, m); err != nil {
			return err
		}
		for i, ref := range refs {
			_, err := tx.ExecContext(ctx, `INSERT INTO message_references
				(message_id, position, channel_id, target_id, label, observed_revision, observed_hash, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				m.ID, i, m.ChannelID, ref.ChannelID, ref.Label, ref.ObservedRevision, ref.ObservedHash, m.CreatedAt)
			if isForeignKeyError(err) {
				return notFound("channel-not-found", "no document has the ID %s", ref.ChannelID)
			}
			if err != nil {
				return fmt.Errorf("save message reference: %w", err)
			}
		}
		return nil
	})
}

// LatestReference is the newest reference the Chat of document from makes
// to document to; found is false when it makes none.
func (s *Store) LatestReference(ctx context.Context, from, to string) (ref Reference, found bool, err error) {
	err = s.read.QueryRowContext(ctx, `SELECT target_id, label, observed_revision, observed_hash, created_at, message_id
		FROM message_references WHERE channel_id = ? AND target_id = ?
		ORDER BY created_at DESC, message_id DESC, position DESC LIMIT 1`, from, to).
		Scan(&ref.ChannelID, &ref.Label, &ref.ObservedRevision, &ref.ObservedHash, &ref.CreatedAt, &ref.MessageID)
	if errors.Is(err, sql.ErrNoRows) {
		return Reference{}, false, nil
	}
	if err != nil {
		return Reference{}, false, fmt.Errorf("read reference: %w", err)
	}
	return ref, true, nil
}

// HasReferences reports whether the Chat of document from refers to any
// document.
func (s *Store) HasReferences(ctx context.Context, from string) (bool, error) {
	var one int
	err := s.read.QueryRowContext(ctx, `SELECT 1 FROM message_references WHERE channel_id = ? LIMIT 1`, from).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read references: %w", err)
	}
	return true, nil
}

// MaxReferencedBy is the most documents ReferencedBy lists.
const MaxReferencedBy = 100

// ReferencedBy lists the documents whose Chat refers to document to, the
// most recently referring first, at most MaxReferencedBy; archived ones
// included, the document itself not.
func (s *Store) ReferencedBy(ctx context.Context, to string) ([]Channel, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT channel_id, max(created_at) AS latest FROM message_references
		WHERE target_id = ? AND channel_id != target_id GROUP BY channel_id ORDER BY latest DESC, channel_id LIMIT ?`, to, MaxReferencedBy)
	if err != nil {
		return nil, fmt.Errorf("read referenced by: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		var latest int64
		if err := rows.Scan(&id, &latest); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read referenced by: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read referenced by: %w", err)
	}
	out := make([]Channel, 0, len(ids))
	for _, id := range ids {
		ch, err := s.Channel(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// HistorySince reads the kept changes of a document's history after version
// after, through version through, oldest first, at most limit: what moves a
// passage referenced at after to where it is now (a passage reference is
// kept anchored as a comment thread is). A version pruned to a snapshot
// comes with no changes.
func (s *Store) HistorySince(ctx context.Context, channelID string, after, through int64, limit int) ([]HistoryEntry, error) {
	return queryHistory(ctx, s.read, `SELECT `+historyColumns+` FROM plan_history
		WHERE channel_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?`, channelID, after, through, limit)
}
