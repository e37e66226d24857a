package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// Browser sessions are kept by the SHA-256 of their cookie value, so the
// database never holds a usable credential.

// AddBrowserSession records a new browser session of the local account.
func (s *Store) AddBrowserSession(ctx context.Context, token string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO browser_sessions (token_hash, created_at) VALUES (?, ?)`,
			tokenHash(token), s.nowMS())
		if err != nil {
			return fmt.Errorf("add browser session: %w", err)
		}
		return nil
	})
}

// BrowserSession reports whether token is a live browser session.
func (s *Store) BrowserSession(ctx context.Context, token string) (bool, error) {
	var created int64
	err := s.read.QueryRowContext(ctx, `SELECT created_at FROM browser_sessions WHERE token_hash = ?`, tokenHash(token)).Scan(&created)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read browser session: %w", err)
	}
	return true, nil
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
