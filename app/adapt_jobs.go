package app

// The jobs package's documents and Planners over the rooms and the agent
// connection: what document-summary@1 reads and who writes it.

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/jobs"
	"github.com/chopin-desktop/chopin/room"
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

func (s *textSink) End(o agentconn.TurnOutcome) { s.done <- o }

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
