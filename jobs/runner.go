package jobs

// The runner: it starts pending jobs whose time has come, at most
// Concurrency at once and one per document, pauses those that need a
// Planner while none is attached, retries a failed attempt after a backoff,
// and records every outcome with a compare-and-set on the job's state, so a
// job superseded or cancelled while it ran never commits its output.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Definition is one job type.
type Definition struct {
	Type         string // type@version
	MaxAttempts  int
	Timeout      time.Duration // of one attempt
	NeedsPlanner bool          // runs only while the document has an attached Planner
	// Run makes one attempt. It returns the artifact and what to project,
	// or an error: ErrPlannerUnavailable pauses the job without counting
	// the attempt, ErrStale ends it superseded (stale), a *Failure or any
	// other error fails the attempt.
	Run func(ctx context.Context, j Job) (Result, error)
	// Stale, when set, is called after a job ended stale, to schedule the
	// work again for the current source.
	Stale func(target string)
}

// Result is a finished attempt.
type Result struct {
	Artifact    json.RawMessage
	Description *Description
}

// ErrStale is a job whose source changed while it ran.
var ErrStale = errors.New("jobs: the source changed while the job ran")

// Failure is a failed attempt with its reason; Final ends the job without
// another attempt.
type Failure struct {
	Reason string
	Final  bool
	Err    error
}

func (f *Failure) Error() string { return fmt.Sprintf("%s: %v", f.Reason, f.Err) }
func (f *Failure) Unwrap() error { return f.Err }

// Options configure a Runner.
type Options struct {
	Store       Store
	Planners    Planners
	Definitions []Definition
	Logger      *slog.Logger
	Clock       func() time.Time // time.Now when nil
	Concurrency int              // 2 when 0
	// Backoff is the wait before the next attempt after failures failed
	// attempts; 30 s, doubling, when nil.
	Backoff func(failures int) time.Duration
	// Changed is told a document's jobs changed, to show them.
	Changed func(target string)
}

// Runner runs jobs. Its methods are safe for concurrent use.
type Runner struct {
	// Set at construction.
	opts Options
	defs map[string]Definition
	log  *slog.Logger
	wake chan struct{}

	// Set by Start, before the loop runs; the timer is the loop's own.
	ctx   context.Context
	timer *time.Timer

	wg sync.WaitGroup // the loop and the attempts under way

	mu      sync.Mutex          // guards running and cancel
	running map[string]*attempt // by target: the attempt under way
	cancel  context.CancelFunc  // ends ctx: Close
}

type attempt struct {
	job    Job
	cancel context.CancelFunc
}

// New builds a Runner; it runs nothing until Start.
func New(o Options) *Runner {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 2
	}
	if o.Backoff == nil {
		o.Backoff = func(n int) time.Duration { return 30 * time.Second << min(max(n-1, 0), 6) }
	}
	r := &Runner{opts: o, defs: map[string]Definition{}, log: o.Logger, wake: make(chan struct{}, 1),
		running: map[string]*attempt{}}
	for _, d := range o.Definitions {
		r.defs[d.Type] = d
	}
	return r
}

func (r *Runner) now() int64 { return r.opts.Clock().UnixMilli() }

// Start puts back to pending the jobs a quit left running (the attempt
// they were in is counted) and starts dispatching.
func (r *Runner) Start(ctx context.Context) error {
	open, err := r.opts.Store.OpenJobs(ctx)
	if err != nil {
		return err
	}
	for _, j := range open {
		if j.State == Running {
			j.State, j.Reason, j.UpdatedAt = Pending, "", r.now()
			if _, err := r.opts.Store.UpdateJob(ctx, j, Running); err != nil {
				return err
			}
		}
	}
	r.mu.Lock()
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.timer = time.NewTimer(time.Hour)
	r.mu.Unlock()
	r.wg.Add(1)
	go r.loop()
	r.poke()
	return nil
}

// Close stops the runner and waits for running attempts to end; they stay
// running in the store and resume at the next Start.
func (r *Runner) Close() {
	r.mu.Lock()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	r.wg.Wait()
}

func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Runner) loop() {
	defer r.wg.Done()
	for {
		next := r.dispatch()
		if next > 0 {
			r.timer.Reset(next)
		}
		select {
		case <-r.ctx.Done():
			r.timer.Stop()
			return
		case <-r.wake:
		case <-r.timer.C:
		}
	}
}

// dispatch starts what may start now and returns how long until the next
// pending job's time (0: none waits).
func (r *Runner) dispatch() time.Duration {
	ctx := r.ctx
	open, err := r.opts.Store.OpenJobs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("list open jobs", "err", err)
		}
		return time.Minute
	}
	var next time.Duration
	now := r.now()
	for _, j := range open {
		if j.State != Pending {
			continue
		}
		def, ok := r.defs[j.Type]
		if !ok {
			continue
		}
		if wait := time.Duration(j.NotBefore-now) * time.Millisecond; wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		r.mu.Lock()
		_, busy := r.running[j.Target]
		full := len(r.running) >= r.opts.Concurrency
		r.mu.Unlock()
		if busy {
			continue
		}
		if def.NeedsPlanner && !r.opts.Planners.Attached(j.Target) {
			if r.move(ctx, j, Paused, ReasonPlannerUnavailable, Pending) && r.opts.Planners.Attached(j.Target) {
				r.PlannerAttached(j.Target) // it attached while the pause was written
			}
			continue
		}
		if full {
			continue
		}
		r.begin(ctx, def, j)
	}
	return next
}

// move sets j's state when it is in one of from and tells Changed.
func (r *Runner) move(ctx context.Context, j Job, state, reason string, from ...string) bool {
	j.State, j.Reason, j.UpdatedAt = state, reason, r.now()
	ok, err := r.opts.Store.UpdateJob(ctx, j, from...)
	if err != nil {
		r.log.Error("update job", "channel", j.Target, "job", j.ID, "err", err)
		return false
	}
	if ok {
		r.changed(j.Target)
	}
	return ok
}

func (r *Runner) changed(target string) {
	if r.opts.Changed != nil {
		r.opts.Changed(target)
	}
}

func (r *Runner) begin(ctx context.Context, def Definition, j Job) {
	j.Attempts++
	if !r.move(ctx, j, Running, "", Pending) {
		return
	}
	j.State = Running
	actx, cancel := context.WithCancel(ctx)
	if def.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, def.Timeout)
	}
	r.mu.Lock()
	r.running[j.Target] = &attempt{job: j, cancel: cancel}
	r.wg.Add(1)
	r.mu.Unlock()
	r.log.Info("job started", "channel", j.Target, "job", j.ID, "type", j.Type, "attempt", j.Attempts)
	go func() {
		defer r.wg.Done()
		res, err := def.Run(actx, j)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		r.mu.Lock()
		if a := r.running[j.Target]; a != nil && a.job.ID == j.ID {
			delete(r.running, j.Target)
		}
		r.mu.Unlock()
		if ctx.Err() == nil { // a runner closing leaves the job running, to resume
			r.finish(ctx, def, j, res, err, timedOut)
		}
		r.poke()
	}()
}

// finish records an attempt's outcome.
func (r *Runner) finish(ctx context.Context, def Definition, j Job, res Result, err error, timedOut bool) {
	log := r.log.With("channel", j.Target, "job", j.ID, "type", j.Type, "attempt", j.Attempts)
	var f *Failure
	switch {
	case err == nil:
		ok, err := r.opts.Store.CompleteJob(ctx, j.ID, res.Artifact, res.Description, r.now())
		switch {
		case err != nil:
			log.Error("complete job", "err", err)
		case ok:
			log.Info("job completed")
			r.changed(j.Target)
		default:
			log.Info("job output dropped: it was superseded or cancelled meanwhile")
		}
		return
	case errors.Is(err, ErrPlannerUnavailable) && !timedOut:
		j.Attempts-- // an attempt no Planner could take is not counted
		if r.move(ctx, j, Paused, ReasonPlannerUnavailable, Running) {
			log.Info("job paused: no Planner is attached")
		}
		return
	case errors.Is(err, ErrStale):
		if r.move(ctx, j, Superseded, ReasonStale, Running) {
			log.Info("job stale: the document changed meanwhile")
			if def.Stale != nil {
				def.Stale(j.Target)
			}
		}
		return
	case timedOut:
		f = &Failure{Reason: ReasonTimeout, Err: err}
	case !errors.As(err, &f):
		f = &Failure{Reason: ReasonError, Err: err}
	}
	j.Failures++
	if f.Final || j.Attempts >= max(def.MaxAttempts, 1) {
		if r.move(ctx, j, Failed, f.Reason, Running) {
			log.Warn("job failed", "reason", f.Reason, "err", f.Err)
		}
		return
	}
	j.NotBefore = r.now() + r.opts.Backoff(j.Failures).Milliseconds()
	if r.move(ctx, j, Pending, f.Reason, Running) {
		log.Info("job attempt failed; retrying later", "reason", f.Reason, "err", f.Err)
	}
}

// Enqueue ensures the job for target with key: the same key returns the
// original job; a new one supersedes the target's open jobs of the type,
// and a running attempt of one of them is stopped.
func (r *Runner) Enqueue(ctx context.Context, typ, target, key string, input json.RawMessage, delay time.Duration) (Job, error) {
	def, ok := r.defs[typ]
	if !ok {
		return Job{}, fmt.Errorf("jobs: no job type %s", typ)
	}
	now := r.now()
	j, created, err := r.opts.Store.EnsureJob(ctx, Job{ID: uuid.NewString(), Type: typ, Target: target, Key: key,
		Input: input, State: Pending, MaxAttempts: def.MaxAttempts, NotBefore: now + delay.Milliseconds(),
		CreatedAt: now, UpdatedAt: now})
	if err != nil || !created {
		return j, err
	}
	r.mu.Lock()
	if a := r.running[target]; a != nil && a.job.ID != j.ID {
		a.cancel()
	}
	r.mu.Unlock()
	r.changed(target)
	r.poke()
	return j, nil
}

// PlannerAttached resumes the document's jobs paused for want of a Planner.
func (r *Runner) PlannerAttached(target string) {
	r.setTarget(target, []string{Paused}, Pending, "", ReasonPlannerUnavailable)
}

// Suspend pauses the document's open jobs (it was archived) and stops a
// running attempt.
func (r *Runner) Suspend(target string) {
	r.setTarget(target, []string{Pending, Paused, Running}, Paused, ReasonArchived, "")
}

// Unsuspend lets the jobs Suspend paused run again (it was restored).
func (r *Runner) Unsuspend(target string) {
	r.setTarget(target, []string{Paused}, Pending, "", ReasonArchived)
}

// Cancel cancels the document's open jobs (it is being deleted) and stops
// a running attempt.
func (r *Runner) Cancel(target string) {
	r.setTarget(target, []string{Pending, Paused, Running}, Cancelled, "", "")
}

// setTarget moves the target's jobs; onlyReason, when set, limits it to
// jobs with that reason.
func (r *Runner) setTarget(target string, from []string, state, reason, onlyReason string) {
	ctx := context.Background()
	jobs, err := r.opts.Store.TargetJobs(ctx, target, 100)
	if err != nil {
		r.log.Error("list jobs", "channel", target, "err", err)
		return
	}
	moved := false
	for _, j := range jobs {
		if !contains(from, j.State) || (onlyReason != "" && j.Reason != onlyReason) {
			continue
		}
		was := j.State
		if state == Pending {
			j.NotBefore = r.now()
		}
		// The state moves before a running attempt is cancelled: cancelled
		// first, the attempt could end and commit its result before the
		// move, and the job would end completed instead of as asked.
		moved = r.move(ctx, j, state, reason, was) || moved
		if was == Running {
			r.mu.Lock()
			if a := r.running[target]; a != nil && a.job.ID == j.ID {
				a.cancel()
			}
			r.mu.Unlock()
		}
	}
	if moved {
		r.poke()
	}
}

// Jobs lists the document's latest jobs, newest first.
func (r *Runner) Jobs(ctx context.Context, target string) ([]Job, error) {
	return r.opts.Store.TargetJobs(ctx, target, 20)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
