package store

// Background jobs and their artifacts (migration jobs), and the projection
// of a completed description into the catalog (spec/channels.md "Generated
// descriptions"). The jobs package says what it needs, and its StoreOf
// converts these types to its own.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Job is one stored background job, with exactly jobs.Job's fields (the
// two packages may not import each other; jobs.StoreOf converts, so the
// compiler keeps them the same).
type Job struct {
	ID          string
	Type        string
	Target      string
	Key         string
	Input       json.RawMessage
	State       string
	Reason      string
	Attempts    int
	Failures    int
	MaxAttempts int
	NotBefore   int64
	CreatedAt   int64
	UpdatedAt   int64
}

// Description is a completed description to project, with exactly
// jobs.Description's fields.
type Description struct {
	Target         string
	Text           string
	SourceRevision int64
	SourceHash     string
	Generator      string
	JobID          string
	ProjectedAt    int64
}

const jobColumns = `id, type, channel_id, idempotency_key, input, state, reason, attempts, failures,
	max_attempts, not_before, created_at, updated_at`

func scanJob(row interface{ Scan(...any) error }) (Job, error) {
	var j Job
	var input string
	err := row.Scan(&j.ID, &j.Type, &j.Target, &j.Key, &input, &j.State, &j.Reason, &j.Attempts, &j.Failures,
		&j.MaxAttempts, &j.NotBefore, &j.CreatedAt, &j.UpdatedAt)
	j.Input = json.RawMessage(input)
	return j, err
}

// ErrJobConflict is an idempotency key used again with different input.
var ErrJobConflict = errors.New("store: the job's idempotency key was used with different input")

// EnsureJob returns the document's job with j.Key, or inserts j and marks
// the document's other open jobs of its type superseded.
func (s *Store) EnsureJob(ctx context.Context, j Job) (Job, bool, error) {
	var out Job
	created := false
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		existing, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs
			WHERE channel_id = ? AND idempotency_key = ?`, j.Target, j.Key))
		if err == nil {
			if existing.Type != j.Type || string(existing.Input) != string(j.Input) {
				return ErrJobConflict
			}
			out = existing
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read job: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'superseded', reason = '', updated_at = ?
			WHERE channel_id = ? AND type = ? AND state IN ('pending', 'paused', 'running')`,
			j.CreatedAt, j.Target, j.Type); err != nil {
			return fmt.Errorf("supersede jobs: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO jobs (`+jobColumns+`, seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, `+nextSeq("jobs")+`)`,
			j.ID, j.Type, j.Target, j.Key, string(j.Input), j.State, j.Reason, j.Attempts, j.Failures,
			j.MaxAttempts, j.NotBefore, j.CreatedAt, j.UpdatedAt, j.Target)
		if isForeignKeyError(err) {
			return notFound("channel-not-found", "no document has the ID %s", j.Target)
		}
		if err != nil {
			return fmt.Errorf("insert job: %w", err)
		}
		// A document keeps its latest ended jobs and the one its
		// description came from; older ones go, with their artifacts.
		if _, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE channel_id = ?1
			AND state NOT IN ('pending', 'paused', 'running')
			AND id != coalesce((SELECT description_job_id FROM channels WHERE id = ?1), '')
			AND id NOT IN (SELECT id FROM jobs WHERE channel_id = ?1 ORDER BY seq DESC LIMIT ?2)`,
			j.Target, KeptJobs); err != nil {
			return fmt.Errorf("prune jobs: %w", err)
		}
		out, created = j, true
		return nil
	})
	return out, created, err
}

// KeptJobs is how many of a document's latest jobs are kept.
const KeptJobs = 20

func (s *Store) queryJobs(ctx context.Context, query string, args ...any) ([]Job, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs `+query, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("read job: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// TargetJobs lists a document's latest jobs, newest first: the last
// inserted first.
func (s *Store) TargetJobs(ctx context.Context, channelID string, limit int) ([]Job, error) {
	return s.queryJobs(ctx, `WHERE channel_id = ? ORDER BY seq DESC LIMIT ?`, channelID, limit)
}

// OpenJobs lists every pending, paused and running job, oldest first.
func (s *Store) OpenJobs(ctx context.Context) ([]Job, error) {
	return s.queryJobs(ctx, `WHERE state IN ('pending', 'paused', 'running') ORDER BY not_before, created_at, channel_id, seq`)
}

// UpdateJob writes a job's state and counters when its stored state is one
// of from.
func (s *Store) UpdateJob(ctx context.Context, j Job, from ...string) (bool, error) {
	if len(from) == 0 {
		return false, fmt.Errorf("update job: no state to move from")
	}
	args := []any{j.State, j.Reason, j.Attempts, j.Failures, j.NotBefore, j.UpdatedAt, j.ID}
	for _, f := range from {
		args = append(args, f)
	}
	var ok bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, reason = ?, attempts = ?, failures = ?, not_before = ?, updated_at = ?
			WHERE id = ? AND state IN (?`+strings.Repeat(", ?", len(from)-1)+`)`, args...)
		if err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		n, err := res.RowsAffected()
		ok = n == 1
		return err
	})
	return ok, err
}

// CompleteJob stores a running job's artifact, projects d when set, and
// marks the job completed, in one transaction; false when it is no longer
// running. The projection leaves the plan revision and updated_at alone.
func (s *Store) CompleteJob(ctx context.Context, id string, artifact json.RawMessage, d *Description, now int64) (bool, error) {
	var ok bool
	err := s.inCatalogTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'completed', reason = '', updated_at = ?
			WHERE id = ? AND state = 'running'`, now, id)
		if err != nil {
			return fmt.Errorf("complete job: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO job_artifacts (job_id, output, created_at) VALUES (?, ?, ?)`,
			id, string(artifact), now); err != nil {
			return fmt.Errorf("store artifact: %w", err)
		}
		if d != nil {
			if err := projectDescription(ctx, tx, *d); err != nil {
				return err
			}
		}
		ok = true
		return nil
	})
	return ok, err
}

// projectDescription writes a description and its provenance, bumping its
// own revision; the same job projected twice changes nothing.
func projectDescription(ctx context.Context, tx *sql.Tx, d Description) error {
	var title string
	if err := tx.QueryRowContext(ctx, `SELECT title FROM channels WHERE id = ?`, d.Target).Scan(&title); err != nil {
		return fmt.Errorf("read channel for its description: %w", err)
	}
	_, err := tx.ExecContext(ctx, `UPDATE channels SET description = ?, description_revision = description_revision + 1,
		description_source_revision = ?, description_source_hash = ?, description_generator = ?,
		description_job_id = ?, description_projected_at = ?, search_text = ?
		WHERE id = ? AND coalesce(description_job_id, '') != ?`,
		d.Text, d.SourceRevision, d.SourceHash, d.Generator, d.JobID, d.ProjectedAt, searchText(title, &d.Text),
		d.Target, d.JobID)
	if err != nil {
		return fmt.Errorf("project description: %w", err)
	}
	return nil
}
