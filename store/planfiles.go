package store

// A document's plan file: its line endings and its last save into the
// repository's checkout (migration plan_files).

import (
	"context"
	"database/sql"
	"errors"
)

// PlanFile is what Chopin remembers of a document's Markdown file.
type PlanFile struct {
	LineEnding  string // "lf" or "crlf"
	SavedPath   string // relative to the checkout, "" before the first save
	SavedSHA256 string // of the bytes last saved there
	SavedAt     int64  // unix ms
}

// PlanFile returns the document's plan file record; a document never
// imported nor saved has the zero record with "lf".
func (s *Store) PlanFile(ctx context.Context, channelID string) (PlanFile, error) {
	f := PlanFile{LineEnding: "lf"}
	err := s.read.QueryRowContext(ctx, `SELECT line_ending, saved_path, saved_sha256, saved_at FROM plan_files WHERE channel_id = ?`,
		channelID).Scan(&f.LineEnding, &f.SavedPath, &f.SavedSHA256, &f.SavedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return f, nil
	}
	return f, err
}

// SetPlanLineEnding records the line endings of the file a document was
// imported from.
func (s *Store) SetPlanLineEnding(ctx context.Context, channelID, ending string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO plan_files (channel_id, line_ending) VALUES (?, ?)
			ON CONFLICT (channel_id) DO UPDATE SET line_ending = excluded.line_ending`, channelID, ending)
		return err
	})
}

// RecordPlanSave records that the document's plan was saved to path (in its
// checkout) as bytes with the SHA-256 sum.
func (s *Store) RecordPlanSave(ctx context.Context, channelID, path, sum string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO plan_files (channel_id, saved_path, saved_sha256, saved_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (channel_id) DO UPDATE SET saved_path = excluded.saved_path,
				saved_sha256 = excluded.saved_sha256, saved_at = excluded.saved_at`, channelID, path, sum, s.nowMS())
		return err
	})
}
