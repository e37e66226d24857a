package agentconn_test

import (
	"context"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// slowEndSink takes its time over End, as Chat does saving the reply.
type slowEndSink struct {
	ending  chan struct{} // closed when End is called
	release chan struct{} // End returns once this closes
	idle    chan struct{}
}

func (s *slowEndSink) Part(wire.StreamPart)             {}
func (s *slowEndSink) ToolCall(agentconn.ToolCallEvent) {}
func (s *slowEndSink) End(agentconn.TurnOutcome)        { close(s.ending); <-s.release }
func (s *slowEndSink) Idle()                            { close(s.idle) }

// A Planner whose turn ended counts as busy until the sink has taken End:
// nobody sees the document idle, and no turn starts, beside a reply that is
// not saved yet (the retry-after-restart race).
func TestBusyUntilTheSinkTookEnd(t *testing.T) {
	h := newHarness(t)
	h.dial(t, client.Config{Handler: client.Handler{Turn: func(context.Context, *client.Turn) error { return nil }}})
	s := &slowEndSink{ending: make(chan struct{}), release: make(chan struct{}), idle: make(chan struct{})}
	if err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "go", Sink: s}); err != nil {
		t.Fatal(err)
	}
	recv(t, s.ending)
	if !h.srv.Busy("doc1") || h.srv.Refusal(context.Background(), "doc1") == nil {
		t.Fatal("the Planner reads as idle while its reply is being saved")
	}
	err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "again", Sink: newSink()})
	if tr, ok := err.(*agentconn.TurnRefused); !ok || tr.Code != agentconn.CodePlannerBusy {
		t.Fatalf("a turn beside an unsaved reply: %v", err)
	}
	close(s.release)
	recv(t, s.idle)
	if h.srv.Busy("doc1") || h.srv.Refusal(context.Background(), "doc1") != nil {
		t.Fatal("still busy after End returned")
	}
}
