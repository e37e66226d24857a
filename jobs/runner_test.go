package jobs_test

// The runner against the real store on a SQLite file: idempotency,
// supersede, the pause without a Planner and the resume on attach, retries
// with backoff, concurrency, and a job that survives a restart.

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/jobs"
	"github.com/chopin-desktop/chopin/store"
)

const wait = 10 * time.Second

// planners is a Planner attached or not, per document.
type planners struct {
	mu       sync.Mutex
	detached map[string]bool
}

func (p *planners) Attached(target string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.detached[target]
}

func (p *planners) set(target string, attached bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.detached == nil {
		p.detached = map[string]bool{}
	}
	p.detached[target] = !attached
}

func (p *planners) Isolated(context.Context, string, jobs.Turn) (string, error) {
	return "", errors.New("not used")
}

type env struct {
	t        *testing.T
	path     string
	store    *store.Store
	docs     []string
	planners *planners
	runner   *jobs.Runner
	backoffs []int // the failure counts Backoff was asked about
	mu       sync.Mutex
}

func newEnv(t *testing.T, ndocs int) *env {
	t.Helper()
	e := &env{t: t, path: filepath.Join(t.TempDir(), "chopin.db"), planners: &planners{}}
	e.open()
	ctx := context.Background()
	repo, err := e.store.EnsureRepository(ctx, "octo/plans", "")
	if err != nil {
		t.Fatal(err)
	}
	for range ndocs {
		ch, err := e.store.CreateChannel(ctx, repo.NodeID, "")
		if err != nil {
			t.Fatal(err)
		}
		e.docs = append(e.docs, ch.ID)
	}
	return e
}

func (e *env) open() {
	s, err := store.Open(context.Background(), e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = s
	e.t.Cleanup(func() { s.Close() })
}

func (e *env) start(defs ...jobs.Definition) {
	e.t.Helper()
	e.runner = jobs.New(jobs.Options{Store: jobs.StoreOf(e.store, store.ErrJobConflict), Planners: e.planners, Definitions: defs,
		Backoff: func(n int) time.Duration {
			e.mu.Lock()
			e.backoffs = append(e.backoffs, n)
			e.mu.Unlock()
			return time.Millisecond
		}})
	if err := e.runner.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(e.runner.Close)
}

func (e *env) enqueue(typ, doc, key string) jobs.Job {
	e.t.Helper()
	j, err := e.runner.Enqueue(context.Background(), typ, doc, key, json.RawMessage(`{"key":"`+key+`"}`), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// job waits until the job is in state, and returns it.
func (e *env) job(doc, id, state string) jobs.Job {
	e.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		js, err := e.runner.Jobs(context.Background(), doc)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, j := range js {
			if j.ID == id && j.State == state {
				return j
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s never became %s: %+v", id, state, js)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func describeAs(text string) func(context.Context, jobs.Job) (jobs.Result, error) {
	return func(_ context.Context, j jobs.Job) (jobs.Result, error) {
		return jobs.Result{Artifact: json.RawMessage(`{}`), Description: &jobs.Description{Target: j.Target, Text: text,
			Generator: j.Type, JobID: j.ID, SourceHash: "h"}}, nil
	}
}

func TestEnqueueIsIdempotent(t *testing.T) {
	e := newEnv(t, 1)
	e.planners.set(e.docs[0], false) // nothing runs
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, NeedsPlanner: true, Run: describeAs("x")})
	a := e.enqueue("t@1", e.docs[0], "k1")
	b := e.enqueue("t@1", e.docs[0], "k1")
	if a.ID != b.ID {
		t.Errorf("the same key made two jobs: %s and %s", a.ID, b.ID)
	}
	_, err := e.runner.Enqueue(context.Background(), "t@1", e.docs[0], "k1", json.RawMessage(`{"other":1}`), 0)
	if !errors.Is(err, jobs.ErrConflict) {
		t.Errorf("the same key with other input: %v, want ErrConflict", err)
	}
}

func TestNewKeySupersedesAndLateOutputIsDropped(t *testing.T) {
	e := newEnv(t, 1)
	doc := e.docs[0]
	started, late := make(chan string, 4), make(chan struct{})
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, Run: func(ctx context.Context, j jobs.Job) (jobs.Result, error) {
		started <- j.ID
		if j.Key == "old" {
			<-ctx.Done() // superseded: its context ends...
			<-late       // ...but its output comes anyway
			return describeAs("old output")(ctx, j)
		}
		return describeAs("new output")(ctx, j)
	}})
	old := e.enqueue("t@1", doc, "old")
	<-started
	fresh := e.enqueue("t@1", doc, "new")
	if got := e.job(doc, old.ID, jobs.Superseded); got.Reason != "" {
		t.Errorf("superseded reason = %q", got.Reason)
	}
	close(late)
	e.job(doc, fresh.ID, jobs.Completed)
	ch, err := e.store.Channel(context.Background(), doc)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Description == nil || *ch.Description != "new output" || ch.DescriptionRevision != 1 {
		t.Errorf("description = %v rev %d, want the new job's only", ch.Description, ch.DescriptionRevision)
	}
	e.job(doc, old.ID, jobs.Superseded) // never completed
}

func TestPausesWithoutPlannerAndResumesOnAttach(t *testing.T) {
	e := newEnv(t, 1)
	doc := e.docs[0]
	e.planners.set(doc, false)
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, NeedsPlanner: true, Run: describeAs("x")})
	j := e.enqueue("t@1", doc, "k")
	if got := e.job(doc, j.ID, jobs.Paused); got.Reason != jobs.ReasonPlannerUnavailable || got.Attempts != 0 {
		t.Errorf("paused job = %+v", got)
	}
	e.planners.set(doc, true)
	e.runner.PlannerAttached(doc)
	if got := e.job(doc, j.ID, jobs.Completed); got.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", got.Attempts)
	}
}

func TestPlannerLeavingMidAttemptPauses(t *testing.T) {
	e := newEnv(t, 1)
	doc := e.docs[0]
	var calls int
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, NeedsPlanner: true, Run: func(ctx context.Context, j jobs.Job) (jobs.Result, error) {
		calls++
		if calls == 1 {
			e.planners.set(doc, false)
			return jobs.Result{}, jobs.ErrPlannerUnavailable
		}
		return describeAs("x")(ctx, j)
	}})
	j := e.enqueue("t@1", doc, "k")
	if got := e.job(doc, j.ID, jobs.Paused); got.Attempts != 0 || got.Failures != 0 {
		t.Errorf("an attempt no Planner took counted: %+v", got)
	}
	e.planners.set(doc, true)
	e.runner.PlannerAttached(doc)
	e.job(doc, j.ID, jobs.Completed)
}

func TestRetryWithBackoffThenFail(t *testing.T) {
	e := newEnv(t, 2)
	fails := map[string]int{e.docs[0]: 1, e.docs[1]: 99}
	var mu sync.Mutex
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, Run: func(ctx context.Context, j jobs.Job) (jobs.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if fails[j.Target] > 0 {
			fails[j.Target]--
			return jobs.Result{}, &jobs.Failure{Reason: jobs.ReasonInvalidOutput, Err: errors.New("not JSON")}
		}
		return describeAs("x")(ctx, j)
	}})
	ok := e.enqueue("t@1", e.docs[0], "k")
	if got := e.job(e.docs[0], ok.ID, jobs.Completed); got.Attempts != 2 || got.Failures != 1 {
		t.Errorf("retried job = %+v, want 2 attempts and 1 failure", got)
	}
	bad := e.enqueue("t@1", e.docs[1], "k")
	if got := e.job(e.docs[1], bad.ID, jobs.Failed); got.Attempts != 2 || got.Failures != 2 || got.Reason != jobs.ReasonInvalidOutput {
		t.Errorf("failed job = %+v, want 2 attempts, 2 failures, invalid-output", got)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.backoffs) != 2 || e.backoffs[0] != 1 || e.backoffs[1] != 1 {
		t.Errorf("backoff asked for %v, want one wait after each first failure", e.backoffs)
	}
}

func TestConcurrencyTwoAndOnePerDocument(t *testing.T) {
	e := newEnv(t, 3)
	release := make(chan struct{})
	var mu sync.Mutex
	total, most := 0, 0
	perDoc := map[string]int{}
	run := func(ctx context.Context, j jobs.Job) (jobs.Result, error) {
		mu.Lock()
		total++
		perDoc[j.Target]++
		most = max(most, total)
		if perDoc[j.Target] > 1 {
			t.Errorf("two jobs of %s ran at once", j.Target)
		}
		mu.Unlock()
		<-release
		mu.Lock()
		total--
		perDoc[j.Target]--
		mu.Unlock()
		return describeAs("x")(ctx, j)
	}
	// Every job is waiting before the runner starts, so its first pass
	// starts as many as it allows at once.
	e.runner = nil
	e.start(jobs.Definition{Type: "a@1", MaxAttempts: 2, Run: run}, jobs.Definition{Type: "b@1", MaxAttempts: 2, Run: run})
	e.runner.Close()
	var all []jobs.Job
	for _, d := range e.docs {
		all = append(all, e.enqueue("a@1", d, "ka"), e.enqueue("b@1", d, "kb"))
	}
	e.start(jobs.Definition{Type: "a@1", MaxAttempts: 2, Run: run}, jobs.Definition{Type: "b@1", MaxAttempts: 2, Run: run})
	for i := range all {
		// Release one only once as many run as may: two, then what is left.
		for want := min(2, len(all)-i); ; {
			mu.Lock()
			n := total
			mu.Unlock()
			if n >= want {
				break
			}
			time.Sleep(time.Millisecond)
		}
		release <- struct{}{}
	}
	for _, j := range all {
		e.job(j.Target, j.ID, jobs.Completed)
	}
	if most != 2 {
		t.Errorf("at most %d jobs ran at once, want 2", most)
	}
}

func TestRunningJobSurvivesRestart(t *testing.T) {
	e := newEnv(t, 1)
	doc := e.docs[0]
	started := make(chan struct{}, 1)
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, Run: func(ctx context.Context, j jobs.Job) (jobs.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return jobs.Result{}, ctx.Err()
	}})
	j := e.enqueue("t@1", doc, "k")
	<-started
	e.runner.Close() // the quit: the attempt stays running in the file
	e.store.Close()

	e.open()
	stored, err := e.store.TargetJobs(context.Background(), doc, 10)
	if err != nil || len(stored) != 1 || stored[0].State != jobs.Running {
		t.Fatalf("after the quit: %+v, %v", stored, err)
	}
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, Run: describeAs("after restart")})
	if got := e.job(doc, j.ID, jobs.Completed); got.Attempts != 2 {
		t.Errorf("attempts = %d, want 2 (the interrupted one counted)", got.Attempts)
	}
}

func TestSuspendAndCancel(t *testing.T) {
	e := newEnv(t, 2)
	started := make(chan string, 2)
	e.start(jobs.Definition{Type: "t@1", MaxAttempts: 2, Run: func(ctx context.Context, j jobs.Job) (jobs.Result, error) {
		started <- j.Target
		<-ctx.Done()
		return describeAs("late")(ctx, j)
	}})
	a, b := e.enqueue("t@1", e.docs[0], "k"), e.enqueue("t@1", e.docs[1], "k")
	<-started
	<-started
	e.runner.Suspend(e.docs[0])
	e.runner.Cancel(e.docs[1])
	if got := e.job(e.docs[0], a.ID, jobs.Paused); got.Reason != jobs.ReasonArchived {
		t.Errorf("suspended job = %+v", got)
	}
	e.job(e.docs[1], b.ID, jobs.Cancelled)
	for _, d := range e.docs {
		if ch, _ := e.store.Channel(context.Background(), d); ch.Description != nil {
			t.Errorf("a stopped job's late output was projected: %q", *ch.Description)
		}
	}
}
