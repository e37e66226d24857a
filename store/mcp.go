package store

// What the local agent MCP tools keep beyond the catalog and the plan: a
// document created over MCP with its plan and brief in one transaction, and
// the replay record of each update_document call (migration 007_mcp.sql).

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"
)

// DocumentCreation is a create_document call: a document whose identity
// derives from the idempotency key, with its plan at revision zero.
type DocumentCreation struct {
	RepositoryNodeID string
	Key              string // the caller's idempotency key
	Title            string
	Plan             string // the whole plan, checked by the caller
	Brief            string
}

// CreateDocument creates a document over MCP in one transaction: its
// catalog entry, its plan checkpoint at revision zero and its brief. The
// same key with the same title, plan and brief returns the document it
// created (created is false); with anything else it is an
// idempotency-conflict.
func (s *Store) CreateDocument(ctx context.Context, d DocumentCreation) (c Channel, created bool, err error) {
	if d.Key == "" || len(d.Key) > 256 {
		return Channel{}, false, invalid("invalid-idempotency-key", "an idempotency key must be 1 to 256 bytes")
	}
	inputHash := hashParts("document", norm.NFC.String(strings.TrimSpace(d.Title)), d.Plan, d.Brief)
	id := ChannelID(d.RepositoryNodeID, d.Key)
	err = s.inCatalogTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		existing, err := channelByID(ctx, tx, id)
		if err == nil {
			var hash string
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(creation_input_hash, '') FROM channels WHERE id = ?`, id).Scan(&hash); err != nil {
				return err
			}
			if hash != inputHash {
				return conflict("idempotency-conflict", "this idempotency key already created a document from different input")
			}
			c = existing
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		now := s.nowMS()
		c, err = createChannel(ctx, tx, now, newChannel{
			repositoryNodeID: d.RepositoryNodeID, id: id, title: d.Title, source: SourceMCP,
			idempotencyKey: d.Key, inputHash: inputHash,
		})
		if err != nil {
			return err
		}
		if err := indexPlanLines(ctx, tx, id, d.Plan); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO plans (channel_id, epoch, version, checkpoint_version, updated_at)
			VALUES (?, ?, 0, 0, ?)`, id, uuid.NewString(), now); err != nil {
			return fmt.Errorf("store the plan: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO plan_texts (channel_id, source) VALUES (?, ?)`, id, d.Plan); err != nil {
			return fmt.Errorf("store the plan: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO mcp_documents (channel_id, brief) VALUES (?, ?)`, id, d.Brief); err != nil {
			return fmt.Errorf("store the brief: %w", err)
		}
		created = true
		return nil
	})
	return c, created, err
}

// DocumentBrief is the brief a document was created with over MCP, or ""
// for one created otherwise.
func (s *Store) DocumentBrief(ctx context.Context, channelID string) (string, error) {
	var brief string
	err := s.read.QueryRowContext(ctx, `SELECT brief FROM mcp_documents WHERE channel_id = ?`, channelID).Scan(&brief)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read brief: %w", err)
	}
	return brief, nil
}

// keptPlanUpdates bounds how many update replays a document keeps; the
// oldest, by the revision they made, go first. A retry comes within moments
// of its call, so the newest thousand are plenty.
const keptPlanUpdates = 1000

// PlanUpdateReplay finds the update a key already made to a document: its
// fingerprint and the revision it produced.
func (s *Store) PlanUpdateReplay(ctx context.Context, channelID, key string) (hash string, revision int64, found bool, err error) {
	err = s.read.QueryRowContext(ctx, `SELECT input_hash, revision FROM mcp_plan_updates
		WHERE channel_id = ? AND idempotency_key = ?`, channelID, key).Scan(&hash, &revision)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("read update replay: %w", err)
	}
	return hash, revision, true, nil
}

// RecordPlanUpdate keeps what an update made under a key, and lets the
// oldest records beyond keptPlanUpdates go.
func (s *Store) RecordPlanUpdate(ctx context.Context, channelID, key, hash string, revision int64) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_plan_updates (channel_id, idempotency_key, input_hash, revision, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, channelID, key, hash, revision, s.nowMS())
		if isForeignKeyError(err) {
			return notFound("channel-not-found", "no document has the ID %s", channelID)
		}
		if err != nil {
			return fmt.Errorf("record update replay: %w", err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM mcp_plan_updates WHERE channel_id = ? AND idempotency_key IN (
			SELECT idempotency_key FROM mcp_plan_updates WHERE channel_id = ?
			ORDER BY revision DESC, created_at DESC LIMIT -1 OFFSET ?)`, channelID, channelID, keptPlanUpdates)
		if err != nil {
			return fmt.Errorf("trim update replays: %w", err)
		}
		return nil
	})
}

// hashParts is the hex SHA-256 of parts, each length-prefixed so that no
// two different lists give the same bytes.
func hashParts(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
