package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// PlanCheckpoint is a plan's full text at a version, in an epoch.
type PlanCheckpoint struct {
	Epoch     string
	Version   int64
	Source    string
	KeepAfter int64 // journal entries after this version stay
}

// PlanUpdate is one accepted change (CodeMirror ChangeSet JSON).
type PlanUpdate struct {
	Version  int64
	ClientID string
	Changes  json.RawMessage
	Author   PlanAuthor // kept in the history, not the journal
}

// PlanRecord is a stored plan: its checkpoint and its journal.
type PlanRecord struct {
	Exists     bool
	Checkpoint PlanCheckpoint
	Journal    []PlanUpdate
}

// LoadPlan reads a document's checkpoint and journal.
func (s *Store) LoadPlan(ctx context.Context, channelID string) (PlanRecord, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return PlanRecord{}, err
	}
	defer tx.Rollback()
	var rec PlanRecord
	cp := &rec.Checkpoint
	err = tx.QueryRowContext(ctx, `SELECT epoch, checkpoint_version, source FROM plans JOIN plan_texts USING (channel_id) WHERE channel_id = ?`,
		channelID).Scan(&cp.Epoch, &cp.Version, &cp.Source)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("load plan: %w", err)
	}
	rec.Exists = true
	rows, err := tx.QueryContext(ctx, `SELECT version, client_id, changes FROM plan_journal
		WHERE channel_id = ? ORDER BY version`, channelID)
	if err != nil {
		return rec, fmt.Errorf("load journal: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u PlanUpdate
		var changes string
		if err := rows.Scan(&u.Version, &u.ClientID, &changes); err != nil {
			return rec, fmt.Errorf("load journal: %w", err)
		}
		u.Changes = json.RawMessage(changes)
		rec.Journal = append(rec.Journal, u)
	}
	return rec, rows.Err()
}

// CommitPlan appends updates to the journal and advances the version, in
// one transaction. It is fenced: the first update must follow the stored
// version exactly, so two writers can never both extend the same version.
// It writes what commitPlan writes, without a sql.Tx (commitpush.go).
func (s *Store) CommitPlan(ctx context.Context, channelID string, updates []PlanUpdate) error {
	return s.commitPush(ctx, channelID, updates)
}

func (s *Store) commitPlan(ctx context.Context, tx *sql.Tx, channelID string, updates []PlanUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	first, last := updates[0].Version, updates[len(updates)-1].Version
	res, err := tx.StmtContext(ctx, s.advancePlan).ExecContext(ctx, last, s.nowMS(), channelID, first-1)
	if err != nil {
		return fmt.Errorf("advance plan version: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return conflict("plan-version-conflict", "the stored plan is not at version %d", first-1)
	}
	for i, u := range updates {
		if u.Version != first+int64(i) {
			return fmt.Errorf("commit plan: update %d has version %d, want %d", i, u.Version, first+int64(i))
		}
		if _, err := tx.StmtContext(ctx, s.journalPlan).ExecContext(ctx, channelID, u.Version, u.ClientID, string(u.Changes)); err != nil {
			return fmt.Errorf("journal update %d: %w", u.Version, err)
		}
	}
	return s.writeHistory(ctx, tx, channelID, updates)
}

// CheckpointPlan stores the full text at a version, creating the plan when
// it has none yet, and drops the journal through cp.KeepAfter.
func (s *Store) CheckpointPlan(ctx context.Context, channelID string, cp PlanCheckpoint) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := indexPlanLines(ctx, tx, channelID, cp.Source)
		if isForeignKeyError(err) {
			return notFound("channel-not-found", "no document has the ID %s", channelID)
		}
		if err != nil {
			return err
		}
		var epoch sql.NullString // the history's before this checkpoint
		if err := tx.QueryRowContext(ctx, `SELECT epoch FROM plans WHERE channel_id = ?`, channelID).Scan(&epoch); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("checkpoint plan: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO plans (channel_id, epoch, version, checkpoint_version, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (channel_id) DO UPDATE SET epoch = excluded.epoch,
				version = max(plans.version, excluded.version),
				checkpoint_version = excluded.checkpoint_version, updated_at = excluded.updated_at`,
			channelID, cp.Epoch, cp.Version, cp.Version, s.nowMS())
		if isForeignKeyError(err) {
			return notFound("channel-not-found", "no document has the ID %s", channelID)
		}
		if err != nil {
			return fmt.Errorf("checkpoint plan: %w", err)
		}
		if err := snapshotHistory(ctx, tx, channelID, cp, epoch, s.nowMS()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO plan_texts (channel_id, source) VALUES (?, ?)
			ON CONFLICT (channel_id) DO UPDATE SET source = excluded.source`, channelID, cp.Source); err != nil {
			return fmt.Errorf("checkpoint plan text: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM plan_journal WHERE channel_id = ? AND version <= ?`, channelID, min(cp.KeepAfter, cp.Version)); err != nil {
			return fmt.Errorf("trim journal: %w", err)
		}
		return nil
	})
}

// Message is one Chat entry.
type Message struct {
	ID        string
	ChannelID string
	Seq       int64
	Role      string
	Author    string
	Text      string
	Status    string
	CreatedAt int64
	UpdatedAt int64
	Details   json.RawMessage
}

// Messages reads the newest limit messages of a document, oldest first.
func (s *Store) Messages(ctx context.Context, channelID string, limit int) ([]Message, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT * FROM (
		SELECT id, channel_id, seq, role, author, text, status, created_at, updated_at, details
		FROM messages WHERE channel_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, channelID, limit)
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var details sql.NullString
		if err := rows.Scan(&m.ID, &m.ChannelID, &m.Seq, &m.Role, &m.Author, &m.Text, &m.Status,
			&m.CreatedAt, &m.UpdatedAt, &details); err != nil {
			return nil, fmt.Errorf("read messages: %w", err)
		}
		if details.Valid {
			m.Details = json.RawMessage(details.String)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// SaveMessage inserts a message or replaces it by ID.
func (s *Store) SaveMessage(ctx context.Context, m Message) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return saveMessage(ctx, tx, m) })
}

func saveMessage(ctx context.Context, tx *sql.Tx, m Message) error {
	var details any
	if len(m.Details) > 0 {
		details = string(m.Details)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO messages (id, channel_id, seq, role, author, text, status, details, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET text = excluded.text, status = excluded.status,
			details = excluded.details, updated_at = excluded.updated_at`,
		m.ID, m.ChannelID, m.Seq, m.Role, m.Author, m.Text, m.Status, details, m.CreatedAt, m.UpdatedAt)
	if isForeignKeyError(err) {
		return notFound("channel-not-found", "no document has the ID %s", m.ChannelID)
	}
	if err != nil {
		return fmt.Errorf("save message: %w", err)
	}
	return nil
}

// Decision is one decision card.
type Decision struct {
	ID         string
	ChannelID  string
	Request    string
	Index      int
	Call       json.RawMessage
	Status     string
	Answer     json.RawMessage
	AnsweredBy string
	Block      int
	CreatedAt  int64
	UpdatedAt  int64
	// Previous is the answers the card had before it was reopened (JSON),
	// DiscardedBy who discarded it.
	Previous    json.RawMessage
	DiscardedBy string
}

// Decisions reads every card of a document, oldest first: in the order
// they were first saved.
func (s *Store) Decisions(ctx context.Context, channelID string) ([]Decision, error) {
	return s.decisions(ctx, `channel_id = ?`, channelID)
}

// Decision reads one card, of any document, by its ID.
func (s *Store) Decision(ctx context.Context, id string) (Decision, error) {
	ds, err := s.decisions(ctx, `id = ?`, id)
	if err != nil {
		return Decision{}, err
	}
	if len(ds) == 0 {
		return Decision{}, notFound("decision-not-found", "no decision card has the ID %s", id)
	}
	return ds[0], nil
}

func (s *Store) decisions(ctx context.Context, where string, arg any) ([]Decision, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, channel_id, request, idx, call, status, answer, answered_by, block,
		created_at, updated_at, previous, discarded_by FROM decisions WHERE `+where+` ORDER BY seq`, arg)
	if err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	defer rows.Close()
	var out []Decision
	for rows.Next() {
		var d Decision
		var call string
		var answer, previous sql.NullString
		if err := rows.Scan(&d.ID, &d.ChannelID, &d.Request, &d.Index, &call, &d.Status, &answer, &d.AnsweredBy,
			&d.Block, &d.CreatedAt, &d.UpdatedAt, &previous, &d.DiscardedBy); err != nil {
			return nil, fmt.Errorf("read decisions: %w", err)
		}
		d.Call = json.RawMessage(call)
		if answer.Valid {
			d.Answer = json.RawMessage(answer.String)
		}
		if previous.Valid {
			d.Previous = json.RawMessage(previous.String)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// SaveDecisions inserts or replaces cards, and commits the plan updates that
// place them, in one transaction.
func (s *Store) SaveDecisions(ctx context.Context, channelID string, cards []Decision, placement []PlanUpdate) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.commitPlan(ctx, tx, channelID, placement); err != nil {
			return err
		}
		for _, d := range cards {
			var answer, previous any
			if len(d.Answer) > 0 {
				answer = string(d.Answer)
			}
			if len(d.Previous) > 0 {
				previous = string(d.Previous)
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO decisions (id, channel_id, request, idx, call, status, answer, answered_by,
				block, created_at, updated_at, previous, discarded_by, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, `+nextSeq("decisions")+`)
				ON CONFLICT (id) DO UPDATE SET status = excluded.status, answer = excluded.answer,
					answered_by = excluded.answered_by, updated_at = excluded.updated_at,
					previous = excluded.previous, discarded_by = excluded.discarded_by`,
				d.ID, channelID, d.Request, d.Index, string(d.Call), d.Status, answer, d.AnsweredBy, d.Block, d.CreatedAt, d.UpdatedAt,
				previous, d.DiscardedBy, channelID)
			if isForeignKeyError(err) {
				return notFound("channel-not-found", "no document has the ID %s", channelID)
			}
			if err != nil {
				return fmt.Errorf("save decision %s: %w", d.ID, err)
			}
		}
		return nil
	})
}
