package plannerhost

import (
	"context"
	"errors"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/room"
)

// The Planner side of Chat: a person's @chopin message becomes a turn on the
// attached agent connection, and the turn's stream becomes the Planner's
// reply in Chat (DESIGN.md section 8).

// plannerSide is the agent connection as a room's Planner.
type plannerSide struct{ a *App }

var _ room.Planner = plannerSide{}

// Available refuses a message no Planner can take now, in the spec's words:
// none attached, the owner away within its grace period, or busy with a
// turn. Nothing is kept for later.
func (p plannerSide) Available(ctx context.Context, ch room.Channel) error {
	if tr := p.a.agent.Refusal(ctx, ch.ID); tr != nil {
		return &room.Error{Code: tr.Code, Message: tr.Message}
	}
	return nil
}

// Turn starts the turn, then opens the reply it streams into. The client
// can only answer after a round trip (start, started, turn), and the sink
// waits for the reply before it touches Chat.
func (p plannerSide) Turn(ctx context.Context, ch room.Channel, m room.Message) error {
	a := p.a
	req, err := a.turnRequest(ctx, ch, m)
	if err != nil {
		return err
	}
	fellBack := a.applyModelChoice(ch.ID, &req) // planner_model.go
	a.chatTurn(ctx, ch.ID, m, &req)             // planner_retry.go
	sink := &replySink{a: a, document: ch.ID, ready: make(chan struct{})}
	req.Sink = sink
	a.replies.Add(1)
	if err := a.agent.StartTurn(ctx, ch.ID, req); err != nil {
		a.replies.Done()
		if a.steer(ctx, ch, m, err) { // planner_steer.go
			return nil
		}
		var tr *agentconn.TurnRefused
		if errors.As(err, &tr) {
			return &room.Error{Code: tr.Code, Message: tr.Message}
		}
		return err
	}
	defer close(sink.ready)
	fellBack(context.WithoutCancel(ctx))
	// The turn outlives the request that started it.
	r, release, err := a.hub.Acquire(context.WithoutCancel(ctx), ch)
	if err != nil {
		a.log.Error("open the room for a reply", "channel", ch.ID, "err", err)
		return nil
	}
	author := a.agent.Status(ch.ID).Login
	if author == "" {
		author = a.cfg.Login
	}
	reply, err := r.StartReply(context.WithoutCancel(ctx), author)
	if err != nil {
		release()
		a.log.Error("start the Planner's reply", "channel", ch.ID, "err", err)
		return nil
	}
	sink.reply, sink.release = reply, release
	if m.ID != "" {
		a.recordAttempt(context.WithoutCancel(ctx), ch.ID, m.ID, reply.ID()) // planner_retry.go
	}
	return nil
}

// replySink turns one turn's stream into the Planner's reply. agentconn
// calls it in order, never concurrently, End last and once.
type replySink struct {
	a        *App
	document string
	ready    chan struct{} // closed once reply is set (or could not be)

	reply     *room.PlannerReply
	release   func()
	text      bool // text so far: a new text block starts a new paragraph
	reasoning bool
	work      chan struct{} // closed when the images queued last are placed (agent_images.go)
}

var _ agentconn.TurnSink = (*replySink)(nil)

func (s *replySink) open() bool {
	<-s.ready
	return s.reply != nil
}

func (s *replySink) Part(p agentconn.StreamPart) {
	if !s.open() {
		return
	}
	switch p.Type {
	case agentconn.PartTextStart:
		if s.text {
			s.reply.Text("\n\n")
		}
	case agentconn.PartTextDelta:
		s.reply.Text(p.Delta)
		s.text = s.text || p.Delta != ""
	case agentconn.PartReasoningStart:
		if s.reasoning {
			s.reply.Reasoning("\n\n")
		}
	case agentconn.PartReasoningDelta:
		s.reply.Reasoning(p.Delta)
		s.reasoning = s.reasoning || p.Delta != ""
	}
	// Tool rows come as ToolCall events; an error part ends the turn and
	// arrives as End's message; the rest says nothing a person reads.
}

func (s *replySink) ToolCall(e agentconn.ToolCallEvent) {
	if !s.open() {
		return
	}
	s.reply.Tool(toolRowOf(e)) // masked (agent_errors.go)
	s.toolImages(e)            // agent_images.go
}

func (s *replySink) End(o agentconn.TurnOutcome) {
	if work := s.work; work != nil {
		// The images still being stored go on the message first.
		go func() { <-work; s.end(o) }()
		return
	}
	s.end(o)
}

func (s *replySink) end(o agentconn.TurnOutcome) {
	defer s.a.replies.Done()
	if !s.open() {
		return
	}
	status, failure := room.ReplyDone, ""
	switch o.Status {
	case "failed":
		status, failure = room.ReplyFailed, o.Message
	case "aborted":
		status = room.ReplyStopped
	}
	if err := s.reply.Finish(context.Background(), status, failure); err != nil {
		s.a.log.Error("save the Planner's reply", "channel", s.document, "err", err)
	}
	s.release()
	go s.a.flushAnswers(s.document) // the next answer nobody waits on (agent_answers.go)
}

// replyGroup counts the replies still streaming, so shutdown saves each
// one's end before it closes the store.
type replyGroup = sync.WaitGroup
