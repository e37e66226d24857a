package store

// This file keeps comment threads on passages of a plan and their notes
// (migration 011_comments.sql), for room/comments.go.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// CommentBlock is a block a passage lies in: its index and digest.
type CommentBlock struct {
	Index  int    `json:"index"`
	Digest string `json:"digest"`
}

// CommentNote is one note of a thread.
type CommentNote struct {
	ID        string
	Author    string
	Text      string
	CreatedAt int64
}

// CommentThread is one thread with its notes, oldest first.
type CommentThread struct {
	ID            string
	ChannelID     string
	Status        string
	Blocks        []CommentBlock
	From, To      int
	AnchorVersion int64
	AnchorState   string
	Quote         string
	CreatedBy     string
	CreatedAt     int64
	UpdatedAt     int64
	DecidedBy     string
	DecidedAt     int64
	Result        json.RawMessage // nil until accepted
	Notes         []CommentNote
}

// CommentThreads reads every thread of a document, oldest first: in the
// order they were first saved (migration 014_creation_order.sql).
func (s *Store) CommentThreads(ctx context.Context, channelID string) ([]CommentThread, error) {
	return s.commentThreads(ctx, `t.channel_id = ?`, channelID)
}

// CommentThread reads one thread, of any document, by its ID.
func (s *Store) CommentThread(ctx context.Context, id string) (CommentThread, error) {
	ts, err := s.commentThreads(ctx, `t.id = ?`, id)
	if err != nil {
		return CommentThread{}, err
	}
	if len(ts) == 0 {
		return CommentThread{}, notFound("thread-not-found", "no comment thread has the ID %s", id)
	}
	return ts[0], nil
}

// commentThreads reads the threads where holds (of comment_threads t),
// oldest first, with their notes.
func (s *Store) commentThreads(ctx context.Context, where string, arg any) ([]CommentThread, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, channel_id, status, blocks, anchor_from, anchor_to, anchor_version, anchor_state,
		quote, created_by, created_at, updated_at, decided_by, decided_at, result
		FROM comment_threads t WHERE `+where+` ORDER BY seq`, arg)
	if err != nil {
		return nil, fmt.Errorf("read comment threads: %w", err)
	}
	defer rows.Close()
	var out []CommentThread
	byID := map[string]int{}
	for rows.Next() {
		var t CommentThread
		var blocks string
		var result sql.NullString
		if err := rows.Scan(&t.ID, &t.ChannelID, &t.Status, &blocks, &t.From, &t.To, &t.AnchorVersion, &t.AnchorState, &t.Quote,
			&t.CreatedBy, &t.CreatedAt, &t.UpdatedAt, &t.DecidedBy, &t.DecidedAt, &result); err != nil {
			return nil, fmt.Errorf("read comment threads: %w", err)
		}
		if err := json.Unmarshal([]byte(blocks), &t.Blocks); err != nil {
			return nil, fmt.Errorf("comment thread %s: blocks: %w", t.ID, err)
		}
		if result.Valid {
			t.Result = json.RawMessage(result.String)
		}
		byID[t.ID] = len(out)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	notes, err := s.read.QueryContext(ctx, `SELECT n.thread_id, n.id, n.author, n.text, n.created_at
		FROM comment_notes n JOIN comment_threads t ON t.id = n.thread_id
		WHERE `+where+` ORDER BY n.thread_id, n.seq`, arg)
	if err != nil {
		return nil, fmt.Errorf("read comment notes: %w", err)
	}
	defer notes.Close()
	for notes.Next() {
		var thread string
		var n CommentNote
		if err := notes.Scan(&thread, &n.ID, &n.Author, &n.Text, &n.CreatedAt); err != nil {
			return nil, fmt.Errorf("read comment notes: %w", err)
		}
		if i, ok := byID[thread]; ok {
			out[i].Notes = append(out[i].Notes, n)
		}
	}
	return out, notes.Err()
}

// SaveCommentThreads inserts or replaces threads and adds the notes they
// do not have yet, together with the plan updates that write their
// <Comment> lines, in one transaction.
func (s *Store) SaveCommentThreads(ctx context.Context, channelID string, threads []CommentThread, placement []PlanUpdate) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.commitPlan(ctx, tx, channelID, placement); err != nil {
			return err
		}
		for _, t := range threads {
			blocks, err := json.Marshal(t.Blocks)
			if err != nil {
				return err
			}
			var result any
			if len(t.Result) > 0 {
				result = string(t.Result)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO comment_threads (id, channel_id, status, blocks, anchor_from, anchor_to,
				anchor_version, anchor_state, quote, created_by, created_at, updated_at, decided_by, decided_at, result, seq)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, `+nextSeq("comment_threads")+`)
				ON CONFLICT (id) DO UPDATE SET status = excluded.status, anchor_from = excluded.anchor_from,
					anchor_to = excluded.anchor_to, anchor_version = excluded.anchor_version,
					anchor_state = excluded.anchor_state, updated_at = excluded.updated_at,
					decided_by = excluded.decided_by, decided_at = excluded.decided_at, result = excluded.result
				WHERE comment_threads.channel_id = excluded.channel_id`,
				t.ID, channelID, t.Status, string(blocks), t.From, t.To, t.AnchorVersion, t.AnchorState, t.Quote,
				t.CreatedBy, t.CreatedAt, t.UpdatedAt, t.DecidedBy, t.DecidedAt, result, channelID)
			if isForeignKeyError(err) {
				return notFound("channel-not-found", "no document has the ID %s", channelID)
			}
			if err != nil {
				return fmt.Errorf("save comment thread %s: %w", t.ID, err)
			}
			// Notes are only ever added: store those past the ones kept.
			var kept int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM comment_notes WHERE thread_id = ?`, t.ID).Scan(&kept); err != nil {
				return fmt.Errorf("save comment notes: %w", err)
			}
			for i := kept; i < len(t.Notes); i++ {
				n := t.Notes[i]
				if _, err := tx.ExecContext(ctx, `INSERT INTO comment_notes (id, thread_id, seq, author, text, created_at)
					VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, n.ID, t.ID, i, n.Author, n.Text, n.CreatedAt); err != nil {
					return fmt.Errorf("save comment note: %w", err)
				}
			}
		}
		return nil
	})
}
