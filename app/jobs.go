package app

// Background jobs wired to the rest of Chopin: the jobs package's store,
// documents and Planners over the store, the room hub and the agent
// connection, and the schedule of document-summary@1 (spec/channels.md
// "Generated descriptions"): after an edit is durable, debounced by
// DESCRIPTION_DEBOUNCE_MS; when a browser opens the document; when it is
// restored. Archiving suspends its jobs and deleting cancels them.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/jobs"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// jobDocuments reads a document's plan through its room, as the Planner's
// read tools do.
type jobDocuments struct{ a *App }

func (d jobDocuments) Source(ctx context.Context, target string) (jobs.Source, error) {
	ch, err := d.a.store.Channel(ctx, target)
	if err != nil {
		return jobs.Source{}, err
	}
	var revision int64
	var source string
	err = d.a.hub.Do(ctx, d.a.roomChannel(ch), func(r *room.Room) error {
		revision, source = r.Source()
		return nil
	})
	if err != nil {
		return jobs.Source{}, err
	}
	// The outline is parsed here, not kept by the room: a room only waiting
	// for its members holds its text alone.
	return jobs.Source{Title: ch.Title, Revision: revision, Text: source,
		Blocks: blockOffsets(source, room.Blocks(source)), Archived: ch.Archived()}, nil
}

// blockOffsets turns the blocks' first lines into byte offsets.
func blockOffsets(text string, blocks []room.Block) []int {
	lineStart := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	out := make([]int, 0, len(blocks))
	for _, b := range blocks {
		if b.StartLine >= 1 && b.StartLine <= len(lineStart) {
			out = append(out, lineStart[b.StartLine-1])
		}
	}
	return out
}

// jobPlanners runs isolated turns on the documents' attached Planners.
type jobPlanners struct{ a *App }

func (p jobPlanners) Attached(target string) bool {
	return p.a.agent.Status(target).State == agentconn.PlannerAttached
}

func (p jobPlanners) Isolated(ctx context.Context, target string, t jobs.Turn) (string, error) {
	sink := &textSink{done: make(chan agentconn.TurnOutcome, 1)}
	err := p.a.agent.StartIsolated(ctx, target, agentconn.TurnRequest{
		Prompt: t.Prompt, Instructions: t.Instructions, Model: p.a.cfg.Model,
		ResponseFormat: &wire.ResponseFormat{Type: "json", Name: t.SchemaName, Schema: t.Schema},
		Sink:           sink,
	})
	if errors.Is(err, agentconn.ErrNotAttached) {
		return "", jobs.ErrPlannerUnavailable
	}
	if err != nil {
		return "", err
	}
	var o agentconn.TurnOutcome
	select {
	case o = <-sink.done:
	case <-ctx.Done():
		// The turn is being aborted (StartIsolated); its end is not waited
		// for, so a quit never waits on a client that does not answer.
		return "", ctx.Err()
	}
	if o.Status != "finished" {
		if !p.Attached(target) {
			return "", jobs.ErrPlannerUnavailable
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &jobs.TurnError{Status: o.Status, Message: o.Message}
	}
	return sink.text(), nil
}

// textSink keeps an isolated turn's text, bounded by the frame size the
// parts came in (the text is validated after, never shown as it streams).
type textSink struct {
	done chan agentconn.TurnOutcome

	mu   sync.Mutex // guards b and over
	b    strings.Builder
	over bool // the text went past maxIsolatedText: never valid
}

// maxIsolatedText bounds what is kept of a turn's text: a description's
// JSON is far smaller, and an answer longer than this is invalid anyway.
const maxIsolatedText = 64 << 10

func (s *textSink) Part(p wire.StreamPart) {
	if p.Type != wire.PartTextDelta {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over || s.b.Len()+len(p.Delta) > maxIsolatedText {
		s.over = true
		return
	}
	s.b.WriteString(p.Delta)
}

func (s *textSink) ToolCall(agentconn.ToolCallEvent) {}
func (s *textSink) End(o agentconn.TurnOutcome)      { s.done <- o }

// text is the turn's text; an answer over the bound reads as "", which is
// not the JSON asked for.
func (s *textSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return ""
	}
	return s.b.String()
}

// describer schedules descriptions; its timers debounce edits.
type describer struct {
	a         *App
	summaries *jobs.Summaries
	runner    *jobs.Runner

	mu     sync.Mutex
	timers map[string]*time.Timer // by document, guarded by mu
	closed bool
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
	d.runner.Close()
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

// describedStore is the room's Persister with the description schedule:
// a plan change, once committed, schedules the document's description.
type describedStore struct {
	roomStore
	a *App
}

func (p describedStore) CommitPlan(ctx context.Context, channelID string, updates []room.Update) error {
	err := p.roomStore.CommitPlan(ctx, channelID, updates)
	if err == nil && len(updates) > 0 {
		p.a.describer.edited(channelID)
	}
	return err
}

func (p describedStore) SaveDecisions(ctx context.Context, channelID string, cards []room.Decision, placement []room.Update) error {
	err := p.roomStore.SaveDecisions(ctx, channelID, cards, placement)
	if err == nil && len(placement) > 0 {
		p.a.describer.edited(channelID)
	}
	return err
}
