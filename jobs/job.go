package jobs

// A job as it is stored and shown: its states, reasons and the interfaces
// the runner needs from storage and from the Planner, and StoreOf, which
// makes a Store of a storage that keeps jobs in types of its own.

import (
	"context"
	"encoding/json"
	"errors"
)

// Job states.
const (
	Pending    = "pending"    // waiting for its time and a free slot
	Paused     = "paused"     // waiting for a Planner, or for the document's restore
	Running    = "running"    // an attempt is under way
	Completed  = "completed"  // its artifact is stored (and projected)
	Failed     = "failed"     // out of attempts, or refused outright
	Cancelled  = "cancelled"  // its document was deleted
	Superseded = "superseded" // a newer job replaced it, or its source changed (stale)
)

// Reasons a job shows with its state. They are words, never model text.
const (
	ReasonPlannerUnavailable = "planner-unavailable" // paused: no Planner is attached
	ReasonArchived           = "archived"            // paused: the document is archived
	ReasonStale              = "stale"               // superseded: the source changed meanwhile
	ReasonInvalidOutput      = "invalid-output"      // the Planner's answer was not the JSON asked for
	ReasonTurnFailed         = "turn-failed"         // the Planner's turn failed
	ReasonTimeout            = "timeout"             // the attempt ran out of time
	ReasonTooLarge           = "too-large"           // the source needs more turns than allowed
	ReasonError              = "error"               // anything else, in the log
)

// Job is one unit of background work. It is an unnamed struct type (an
// alias), so that a storage's own job type with exactly these fields, such
// as store.Job, converts to and from it: see StoreOf.
type Job = struct {
	ID          string
	Type        string // type@version, such as document-summary@1
	Target      string // the document's ID
	Key         string // idempotency key, unique per document
	Input       json.RawMessage
	State       string
	Reason      string
	Attempts    int
	Failures    int
	MaxAttempts int
	NotBefore   int64 // unix ms: not started before
	CreatedAt   int64
	UpdatedAt   int64
}

// Description is a completed document-summary@1 projected into the
// catalog. Like Job, it is an unnamed struct type, for StoreOf.
type Description = struct {
	Target         string
	Text           string
	SourceRevision int64
	SourceHash     string
	Generator      string // the job's type@version
	JobID          string
	ProjectedAt    int64
}

// Store keeps jobs and their one artifact each.
type Store interface {
	// EnsureJob returns the target's job with j.Key when there is one
	// (created false; ErrConflict when its input differs). Otherwise it
	// inserts j and marks the target's other open jobs of j.Type
	// superseded, in one transaction.
	EnsureJob(ctx context.Context, j Job) (job Job, created bool, err error)
	// TargetJobs lists the target's latest jobs, newest first.
	TargetJobs(ctx context.Context, target string, limit int) ([]Job, error)
	// OpenJobs lists every pending, paused and running job, oldest first.
	OpenJobs(ctx context.Context) ([]Job, error)
	// UpdateJob writes j's state, reason, attempts, failures, not-before
	// and updated-at when its stored state is one of from; false when not.
	UpdateJob(ctx context.Context, j Job, from ...string) (bool, error)
	// CompleteJob stores a running job's artifact, projects d when set, and
	// marks it completed, in one transaction; false when the job is no
	// longer running (its output is dropped).
	CompleteJob(ctx context.Context, id string, artifact json.RawMessage, d *Description, now int64) (bool, error)
}

// ErrConflict is an idempotency key used again with different input.
var ErrConflict = errors.New("jobs: the idempotency key was used with different input")

// Rows is a storage that keeps jobs and descriptions in types of its own,
// J and D, with exactly Job's and Description's fields: store.Job and
// store.Description, since neither package may import the other. Its
// methods are Store's.
type Rows[J ~Job, D ~Description] interface {
	EnsureJob(ctx context.Context, j J) (job J, created bool, err error)
	TargetJobs(ctx context.Context, target string, limit int) ([]J, error)
	OpenJobs(ctx context.Context) ([]J, error)
	UpdateJob(ctx context.Context, j J, from ...string) (bool, error)
	CompleteJob(ctx context.Context, id string, artifact json.RawMessage, d *D, now int64) (bool, error)
}

// StoreOf is rows as a Store: each job and description converted as it
// passes (the compiler keeps the fields the same), and conflict, rows' own
// error for a key used again with different input, reported as
// ErrConflict.
func StoreOf[J ~Job, D ~Description](rows Rows[J, D], conflict error) Store {
	return rowStore[J, D]{rows: rows, conflict: conflict}
}

type rowStore[J ~Job, D ~Description] struct {
	rows     Rows[J, D]
	conflict error
}

func (s rowStore[J, D]) EnsureJob(ctx context.Context, j Job) (Job, bool, error) {
	out, created, err := s.rows.EnsureJob(ctx, J(j))
	if errors.Is(err, s.conflict) {
		err = ErrConflict
	}
	return Job(out), created, err
}

func (s rowStore[J, D]) TargetJobs(ctx context.Context, target string, limit int) ([]Job, error) {
	return jobsOf(s.rows.TargetJobs(ctx, target, limit))
}

func (s rowStore[J, D]) OpenJobs(ctx context.Context) ([]Job, error) {
	return jobsOf(s.rows.OpenJobs(ctx))
}

func (s rowStore[J, D]) UpdateJob(ctx context.Context, j Job, from ...string) (bool, error) {
	return s.rows.UpdateJob(ctx, J(j), from...)
}

func (s rowStore[J, D]) CompleteJob(ctx context.Context, id string, artifact json.RawMessage, d *Description, now int64) (bool, error) {
	var row *D
	if d != nil {
		v := D(*d)
		row = &v
	}
	return s.rows.CompleteJob(ctx, id, artifact, row, now)
}

func jobsOf[J ~Job](in []J, err error) ([]Job, error) {
	out := make([]Job, len(in))
	for i, j := range in {
		out[i] = Job(j)
	}
	return out, err
}

// Turn is one isolated Planner turn: no tools, the answer as JSON.
type Turn struct {
	Instructions string
	Prompt       string
	SchemaName   string
	Schema       json.RawMessage
}

// Planners is the documents' attached Planners as a job sees them.
type Planners interface {
	// Attached reports whether the document has an attached Planner.
	Attached(target string) bool
	// Isolated runs one turn in an isolated session of the document's
	// Planner and returns its text once it finished. ErrPlannerUnavailable
	// when none is attached (or it left meanwhile); a *TurnError when the
	// turn failed. It aborts the turn when ctx ends.
	Isolated(ctx context.Context, target string, t Turn) (string, error)
}

// ErrPlannerUnavailable: no Planner is attached to the document.
var ErrPlannerUnavailable = errors.New("jobs: no Planner is attached to the document")

// TurnError is a Planner turn that ended without finishing.
type TurnError struct {
	Status  string // failed or aborted
	Message string
}

func (e *TurnError) Error() string { return "the Planner's turn " + e.Status + ": " + e.Message }
