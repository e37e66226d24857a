package agentconn_test

// Isolated sessions (StartIsolated): the start names mode isolated, the
// turn carries tools: [] and the response format, it runs beside a Planner
// turn without either refusing the other, Stop Planner leaves it alone, and
// its context ending aborts it.

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

func TestIsolatedTurn(t *testing.T) {
	h := newHarness(t)
	type seen struct {
		mode string
		msg  wire.Turn
	}
	turns := make(chan seen, 4)
	h.dial(t, client.Config{Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		turns <- seen{tr.Session.Mode, tr.Message}
		if tr.Session.Mode == wire.ModeIsolated {
			if tr.Message.Prompt == "wait" {
				<-ctx.Done() // until aborted
				return nil
			}
			return tr.Text(`{"description":"Plan for storage"}`)
		}
		<-ctx.Done() // until Stop Planner aborts it
		return nil
	}}})
	h.waitStatus(t, "doc1", agentconn.PlannerAttached)

	chat := newSink()
	if err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "@ana: hi", Tools: []wire.Tool{readPlan}, Sink: chat}); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, turns); got.mode != wire.ModePlanner {
		t.Fatalf("first turn mode %q", got.mode)
	}

	format := &wire.ResponseFormat{Type: "json", Name: "description", Schema: json.RawMessage(`{"type":"object"}`)}
	iso := newSink()
	if err := h.srv.StartIsolated(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "# Storage", ResponseFormat: format, Sink: iso}); err != nil {
		t.Fatalf("an isolated turn beside the Chat turn: %v", err)
	}
	got := recv(t, turns)
	if got.mode != wire.ModeIsolated || got.msg.Tools == nil || len(got.msg.Tools) != 0 || got.msg.ResponseFormat == nil || got.msg.ResponseFormat.Name != "description" {
		t.Errorf("isolated turn: mode %q, tools %v, responseFormat %+v", got.mode, got.msg.Tools, got.msg.ResponseFormat)
	}
	parts, o := iso.until(t)
	if o.Status != "finished" || textOf(parts) != `{"description":"Plan for storage"}` {
		t.Errorf("isolated outcome %+v, text %q", o, textOf(parts))
	}
	if !h.srv.Busy("doc1") {
		t.Error("the Chat turn no longer counts as busy")
	}

	// A second Chat turn is refused while the first runs; an isolated
	// one is not.
	err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "@ana: again", Sink: newSink()})
	if r, ok := err.(*agentconn.TurnRefused); !ok || r.Code != agentconn.CodePlannerBusy {
		t.Errorf("a second Chat turn: %v", err)
	}
	if err := h.srv.StartIsolated(context.Background(), "doc1", agentconn.TurnRequest{Tools: []wire.Tool{readPlan}, Sink: newSink()}); err == nil {
		t.Error("an isolated turn with tools was started")
	}

	// Stop Planner aborts the Chat turn and leaves the isolated one.
	ctx, cancel := context.WithCancel(context.Background())
	waiting := newSink()
	if err := h.srv.StartIsolated(ctx, "doc1", agentconn.TurnRequest{Prompt: "wait", Sink: waiting}); err != nil {
		t.Fatal(err)
	}
	recv(t, turns)
	out, err := h.srv.Stop(context.Background(), "doc1", "")
	if err != nil || !out.Aborted {
		t.Fatalf("Stop: %+v, %v", out, err)
	}
	if _, o := chat.until(t); o.Status != "aborted" {
		t.Errorf("Chat turn after Stop: %+v", o)
	}
	select {
	case ev := <-waiting.events:
		t.Fatalf("Stop Planner reached the isolated turn: %+v", ev)
	default:
	}
	cancel() // the job's context ends: the turn is aborted
	if _, o := waiting.until(t); o.Status != "aborted" {
		t.Errorf("isolated turn after its context ended: %+v", o)
	}
}

func textOf(events []any) string {
	var s string
	for _, ev := range events {
		if p, ok := ev.(wire.StreamPart); ok && p.Type == wire.PartTextDelta {
			s += p.Delta
		}
	}
	return s
}
