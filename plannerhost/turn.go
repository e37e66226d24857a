package plannerhost

import (
	"context"
	"errors"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// The Planner side of Chat: a person's @chopin message becomes a turn on the
// attached agent connection, and the turn's stream becomes the Planner's
// reply in Chat (DESIGN.md section 8).

// Available refuses a message no Planner can take now, in the spec's words:
// none attached, the owner away within its grace period, or busy with a
// turn. Nothing is kept for later.
func (h *Host) Available(ctx context.Context, ch room.Channel) error {
	if tr := h.agent.Refusal(ctx, ch.ID); tr != nil {
		return &room.Error{Code: tr.Code, Message: tr.Message}
	}
	return nil
}

// Turn starts the turn, then opens the reply it streams into. The client
// can only answer after a round trip (start, started, turn), and the sink
// waits for the reply before it touches Chat.
func (h *Host) Turn(ctx context.Context, ch room.Channel, m room.Message) error {
	req, err := h.turnRequest(ctx, ch, m)
	if err != nil {
		return err
	}
	fellBack := h.applyModelChoice(ch.ID, &req)
	h.chatTurn(ctx, ch.ID, m, &req)
	sink := &replySink{h: h, document: ch.ID, ready: make(chan struct{})}
	req.Sink = sink
	h.replies.Add(1)
	if err := h.agent.StartTurn(ctx, ch.ID, req); err != nil {
		h.replies.Done()
		if h.steer(ctx, ch, m, err) {
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
	r, release, err := h.hub.Acquire(context.WithoutCancel(ctx), ch)
	if err != nil {
		h.log.Error("open the room for a reply", "channel", ch.ID, "err", err)
		return nil
	}
	author := h.agent.Status(ch.ID).Login
	if author == "" {
		author = h.login
	}
	reply, err := r.StartReply(context.WithoutCancel(ctx), author)
	if err != nil {
		release()
		h.log.Error("start the Planner's reply", "channel", ch.ID, "err", err)
		return nil
	}
	sink.reply, sink.release = reply, release
	if m.ID != "" {
		h.recordAttempt(context.WithoutCancel(ctx), ch.ID, m.ID, reply.ID())
	}
	return nil
}

// replySink turns one turn's stream into the Planner's reply. agentconn
// calls it in order, never concurrently, End last and once.
type replySink struct {
	h        *Host
	document string
	ready    chan struct{} // closed once reply is set (or could not be)

	reply     *room.PlannerReply
	release   func()
	text      bool // text so far: a new text block starts a new paragraph
	reasoning bool
	work      chan struct{} // closed when the images queued last are placed
}

var _ agentconn.TurnSink = (*replySink)(nil)

func (s *replySink) open() bool {
	<-s.ready
	return s.reply != nil
}

func (s *replySink) Part(p wire.StreamPart) {
	if !s.open() {
		return
	}
	switch p.Type {
	case wire.PartTextStart:
		if s.text {
			s.reply.Text("\n\n")
		}
	case wire.PartTextDelta:
		s.reply.Text(p.Delta)
		s.text = s.text || p.Delta != ""
	case wire.PartReasoningStart:
		if s.reasoning {
			s.reply.Reasoning("\n\n")
		}
	case wire.PartReasoningDelta:
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
	s.reply.Tool(toolRowOf(e)) // masked
	s.toolImages(e)
}

func (s *replySink) End(o agentconn.TurnOutcome) {
	if work := s.work; work != nil {
		// The images still being stored go on the message first, and the
		// Planner counts as busy until they have (see agentconn.TurnSink).
		<-work
	}
	s.end(o)
}

// Idle is told once the Planner no longer counts as busy with this turn:
// an answer nobody waited on can go now.
func (s *replySink) Idle() { go s.h.flushAnswers(s.document) }

func (s *replySink) end(o agentconn.TurnOutcome) {
	defer s.h.replies.Done()
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
		s.h.log.Error("save the Planner's reply", "channel", s.document, "err", err)
	}
	s.release()
	go s.h.flushAnswers(s.document) // the next answer nobody waits on
}
