package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Browser sessions are kept by the SHA-256 of their cookie value, so the
// database never holds a usable credential. A session unused for
// BrowserSessionIdle is over (and pruned); all of them can be signed out
// at once.

// BrowserSessionIdle is how long a browser session lasts unused.
const BrowserSessionIdle = 30 * 24 * time.Hour

// AddBrowserSession records a new browser session of the local account.
func (s *Store) AddBrowserSession(ctx context.Context, token string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := s.nowMS()
		_, err := tx.ExecContext(ctx, `INSERT INTO browser_sessions (token_hash, created_at, last_used_at) VALUES (?, ?, ?)`,
			tokenHash(token), now, now)
		if err != nil {
			return fmt.Errorf("add browser session: %w", err)
		}
		return nil
	})
}

// BrowserSession reports whether token is a live browser session: one that
// exists and was used within BrowserSessionIdle.
func (s *Store) BrowserSession(ctx context.Context, token string) (bool, error) {
	var used int64
	err := s.read.QueryRowContext(ctx, `SELECT last_used_at FROM browser_sessions WHERE token_hash = ?`, tokenHash(token)).Scan(&used)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read browser session: %w", err)
	}
	return used >= s.nowMS()-BrowserSessionIdle.Milliseconds(), nil
}

// TouchBrowserSession records that the session was used now.
func (s *Store) TouchBrowserSession(ctx context.Context, token string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE browser_sessions SET last_used_at = ? WHERE token_hash = ?`, s.nowMS(), tokenHash(token)); err != nil {
			return fmt.Errorf("touch browser session: %w", err)
		}
		return nil
	})
}

// PruneBrowserSessions deletes the sessions unused for BrowserSessionIdle
// and reports how many.
func (s *Store) PruneBrowserSessions(ctx context.Context) (int64, error) {
	return s.deleteSessions(ctx, `DELETE FROM browser_sessions WHERE last_used_at < ?`, s.nowMS()-BrowserSessionIdle.Milliseconds())
}

// SignOutEverywhere deletes every browser session and reports how many.
func (s *Store) SignOutEverywhere(ctx context.Context) (int64, error) {
	return s.deleteSessions(ctx, `DELETE FROM browser_sessions`)
}

func (s *Store) deleteSessions(ctx context.Context, query string, args ...any) (n int64, err error) {
	err = s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("delete browser sessions: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
