package app

// Background jobs wired to the rest of Chopin, and the schedule of
// document-summary@1 (spec/channels.md "Generated descriptions"): after an edit is durable, debounced by
// DESCRIPTION_DEBOUNCE_MS; when a browser opens the document; when it is
// restored. Archiving suspends its jobs and deleting cancels them.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/jobs"
	"github.com/chopin-desktop/chopin/store"
)

// maxIsolatedText bounds what is kept of a turn's text: a description's
// JSON is far smaller, and an answer longer than this is invalid anyway.
const maxIsolatedText = 64 << 10

// describer schedules descriptions; its timers debounce edits.
type describer struct {
	a         *App
	summaries *jobs.Summaries
	runner    *jobs.Runner

	started chan struct{} // closed once the runner's Start has returned

	mu     sync.Mutex
	timers map[string]*time.Timer // by document, guarded by mu
	closed bool
}

// start starts the runner beside the rest of the start-up, once the
// store's first read connection is open (a millisecond): nothing a first
// page needs waits for either. A job asked for meanwhile is kept and runs
// once the runner is up; what shows jobs waits for it (waitStarted).
func (d *describer) start() {
	d.started = make(chan struct{})
	go func() {
		defer close(d.started)
		<-d.a.store.ReaderOpen()
		if err := d.runner.Start(context.Background()); err != nil {
			d.a.log.Error("background jobs did not start; descriptions wait for the next launch", "err", err)
		}
	}()
}

func (a *App) newJobs() {
	d := &describer{a: a, timers: map[string]*time.Timer{}}
	d.summaries = jobs.NewSummaries(jobDocuments{a}, jobPlanners{a})
	opts := jobs.Options{Store: jobs.StoreOf(a.store, store.ErrJobConflict), Planners: jobPlanners{a}, Logger: a.log,
		Definitions: []jobs.Definition{d.summaries.Definition()}, Changed: a.jobsChanged}
	if a.cfg.JobBackoff > 0 {
		backoff := a.cfg.JobBackoff
		opts.Backoff = func(int) time.Duration { return backoff }
	}
	d.runner = jobs.New(opts)
	d.summaries.Use(d.runner)
	a.describer = d
}

// ensure ensures a description job for the document's current source.
func (d *describer) ensure(id string, delay time.Duration) {
	if _, err := d.summaries.Ensure(context.Background(), id, delay); err != nil && !errors.Is(err, store.ErrNotFound) {
		d.a.log.Error("schedule the description", "channel", id, "err", err)
	}
}

// edited schedules the description after DESCRIPTION_DEBOUNCE_MS without
// another edit.
func (d *describer) edited(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if t := d.timers[id]; t != nil {
		t.Stop()
	}
	d.timers[id] = time.AfterFunc(d.a.cfg.DescriptionDebounce, func() {
		d.mu.Lock()
		delete(d.timers, id)
		closed := d.closed
		d.mu.Unlock()
		if !closed {
			d.ensure(id, 0)
		}
	})
}

func (d *describer) forget(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t := d.timers[id]; t != nil {
		t.Stop()
		delete(d.timers, id)
	}
}

func (d *describer) close() {
	d.mu.Lock()
	d.closed = true
	for id, t := range d.timers {
		t.Stop()
		delete(d.timers, id)
	}
	d.mu.Unlock()
	d.waitStarted()
	d.runner.Close()
}

// waitStarted returns once the runner's Start has returned: until then the
// store may still show a job a quit left running as running.
func (d *describer) waitStarted() {
	if d.started != nil {
		<-d.started
	}
}

// jobView is a job as HTTP and the room's sockets show it: never its
// input, prompts or model text.
type jobView struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	State     string `json:"state"`
	Attempts  int    `json:"attempts"`
	Failures  int    `json:"failures"`
	Reason    string `json:"reason,omitempty"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

func (a *App) jobViews(ctx context.Context, id string) ([]jobView, error) {
	a.describer.waitStarted()
	js, err := a.describer.runner.Jobs(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]jobView, 0, len(js))
	for _, j := range js {
		out = append(out, jobView{ID: j.ID, Type: j.Type, State: j.State, Attempts: j.Attempts, Failures: j.Failures,
			Reason: j.Reason, CreatedAt: rfc3339(j.CreatedAt), UpdatedAt: rfc3339(j.UpdatedAt)})
	}
	return out, nil
}

// jobsChanged shows a document's open tabs its jobs, and its description
// once one was projected.
func (a *App) jobsChanged(id string) {
	r, ok := a.hub.Room(id)
	if !ok {
		return
	}
	ctx := context.Background()
	views, err := a.jobViews(ctx, id)
	if err != nil {
		a.log.Error("list jobs", "channel", id, "err", err)
		return
	}
	r.ShowJobs(views)
	if ch, err := a.store.Channel(ctx, id); err == nil && ch.DescriptionRevision != r.Channel().DescriptionRevision {
		a.hub.ChannelChanged(a.roomChannel(ch))
	}
}

// handleChannelJobs answers GET /api/channels/:channelId/jobs.
func (a *App) handleChannelJobs(c echo.Context) error {
	ch, err := a.store.Channel(c.Request().Context(), c.Param("channelId"))
	if err != nil {
		return err
	}
	views, err := a.jobViews(c.Request().Context(), ch.ID)
	if err != nil {
		return err
	}
	return c.JSON(200, struct {
		Jobs []jobView `json:"jobs"`
	}{views})
}
