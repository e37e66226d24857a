package store

import (
	"context"
	"database/sql"
	"fmt"
)

// DeleteMessage removes one Chat message of a document: a failed Planner
// reply that a person retried (its partial reply, tool rows and failure
// line all live in it).
func (s *Store) DeleteMessage(ctx context.Context, channelID, id string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE channel_id = ? AND id = ?`, channelID, id)
		if err != nil {
			return fmt.Errorf("delete message: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("message-not-found", "no message of this document has the ID %s", id)
		}
		return nil
	})
}
