package agentconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

var readPlan = wire.Tool{Name: "read_plan", Description: "Read the plan.", InputSchema: json.RawMessage(`{"type":"object"}`)}

func TestFullTurn(t *testing.T) {
	h := newHarness(t)
	h.host.tools["read_plan"] = func(_ context.Context, call agentconn.ToolCall) (json.RawMessage, error) {
		if call.Document != "doc1" || string(call.Input) != `{"offset":1}` {
			return nil, errors.New("unexpected call")
		}
		return json.RawMessage(`"document: doc1\nrevision: 3"`), nil
	}
	h.host.tools["edit_plan"] = func(context.Context, agentconn.ToolCall) (json.RawMessage, error) {
		return nil, &wire.ToolError{Code: "stale-revision", Kind: "StaleRevision", Message: "The plan changed since revision 2."}
	}
	got := make(chan wire.Turn, 1)
	h.dial(t, client.Config{Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		got <- tr.Message
		must(t, tr.Send(wire.StreamPart{Type: "stream-start", ModelID: "m1"}))
		must(t, tr.Reasoning("Let me read it."))
		plan, err := tr.CallTool(ctx, "read_plan", map[string]int{"offset": 1})
		if err != nil || string(plan) != `"document: doc1\nrevision: 3"` {
			t.Errorf("read_plan = %s, %v", plan, err)
		}
		_, err = tr.CallTool(ctx, "edit_plan", map[string]any{})
		var te *client.ToolResultError
		if !errors.As(err, &te) || string(te.Output) != `{"error":"The plan changed since revision 2."}` {
			t.Errorf("edit_plan error = %v", err)
		}
		must(t, tr.DeclareTools("bash"))
		must(t, tr.OwnTool("bash", map[string]string{"cmd": "ls"}, func() (any, error) {
			return nil, &wire.ToolError{Code: "no-repository-credential", Kind: "NoRepositoryCredential", Message: "No token."}
		}))
		must(t, tr.Text("Done."))
		return tr.Send(wire.StreamPart{Type: "finish", FinishReason: &wire.FinishReason{Unified: "stop"}, TotalUsage: &wire.Usage{}})
	}}})

	s := newSink()
	req := agentconn.TurnRequest{Prompt: "@ana: read it", Instructions: "You are the Planner.", Model: "m1",
		Tools: []wire.Tool{readPlan, {Name: "edit_plan"}}, ResponseFormat: &wire.ResponseFormat{Type: "text"}, Sink: s}
	if err := h.srv.StartTurn(context.Background(), "doc1", req); err != nil {
		t.Fatal(err)
	}
	tm := recv(t, got)
	if tm.Prompt != req.Prompt || tm.Instructions != req.Instructions || tm.Model != "m1" ||
		!reflect.DeepEqual(tm.Tools, req.Tools) || tm.ResponseFormat.Type != "text" {
		t.Errorf("turn message = %+v", tm)
	}
	events, outcome := s.until(t)
	if outcome != (agentconn.TurnOutcome{Status: "finished"}) {
		t.Errorf("outcome = %+v", outcome)
	}
	var kinds []string
	var rows []agentconn.ToolCallEvent
	for _, ev := range events {
		switch ev := ev.(type) {
		case wire.StreamPart:
			kinds = append(kinds, ev.Type)
		case agentconn.ToolCallEvent:
			kinds = append(kinds, "row:"+ev.Name+":"+ev.Status)
			rows = append(rows, ev)
		}
	}
	want := []string{"stream-start", "reasoning-start", "reasoning-delta", "reasoning-end",
		"row:read_plan:running", "row:read_plan:done", "row:edit_plan:running", "row:edit_plan:failed",
		"tool-call", "row:bash:running", "tool-result", "row:bash:failed",
		"text-start", "text-delta", "text-end", "finish"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("events:\n got %q\nwant %q", kinds, want)
	}
	if e := rows[3]; !e.Host || e.Error == nil || e.Error.Kind != "StaleRevision" ||
		string(e.Result) != `{"error":{"code":"stale-revision","kind":"StaleRevision","message":"The plan changed since revision 2."}}` {
		t.Errorf("edit_plan row = %+v (%s)", e, e.Result)
	}
	if e := rows[5]; e.Host || e.Error == nil || e.Error.Code != "no-repository-credential" || string(e.Input) != `{"cmd":"ls"}` {
		t.Errorf("bash row = %+v", e)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}

func TestHostToolErrors(t *testing.T) {
	h := newHarness(t)
	h.host.tools["boom"] = func(context.Context, agentconn.ToolCall) (json.RawMessage, error) {
		return nil, errors.New("sql: database is locked") // detail for the log only
	}
	c := h.rawAttached(t)
	s := newSink()
	session, turn := startRawTurn(t, h, c, s, readPlan, wire.Tool{Name: "boom"})
	send := func(m wire.Message) {
		b, err := wire.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		writeJSON(t, c, string(b))
	}
	expect := func(want string) {
		t.Helper()
		if got := readFrame(t, c); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	prefix := `{"type":"host-tool-result","session":"` + session + `","turn":"` + turn + `","toolCallId":`
	send(wire.HostToolCall{Session: session, Turn: turn, ToolCallID: "c1", ToolName: "nope", Input: "{}"})
	expect(prefix + `"c1","output":{"error":"nope is not one of this turn's tools."},"isError":true}`)
	send(wire.HostToolCall{Session: session, Turn: turn, ToolCallID: "c2", ToolName: "read_plan", Input: "{oops"})
	expect(prefix + `"c2","output":{"error":"The input of read_plan is not valid JSON."},"isError":true}`)
	send(wire.HostToolCall{Session: session, Turn: turn, ToolCallID: "c3", ToolName: "boom", Input: "{}"})
	expect(prefix + `"c3","output":{"error":"The tool failed in Chopin."},"isError":true}`)
	send(wire.HostToolCall{Session: "gone", Turn: turn, ToolCallID: "c4", ToolName: "read_plan", Input: "{}"})
	expect(`{"type":"host-tool-result","session":"gone","turn":"` + turn + `","toolCallId":"c4","output":{"error":"The session has ended."},"isError":true}`)
	send(wire.HostToolCall{Session: session, Turn: "old", ToolCallID: "c5", ToolName: "read_plan", Input: "{}"})
	expect(`{"type":"host-tool-result","session":"` + session + `","turn":"old","toolCallId":"c5","output":{"error":"The turn has ended."},"isError":true}`)

	// Reusing a toolCallId fails the turn without running the tool again.
	send(wire.HostToolCall{Session: session, Turn: turn, ToolCallID: "c1", ToolName: "read_plan", Input: "{}"})
	expect(`{"type":"abort","session":"` + session + `","turn":"` + turn + `"}`)
	expect(`{"type":"destroy","session":"` + session + `"}`)
	if _, o := s.until(t); o.Status != "failed" || o.Message != "The Planner used the tool call id c1 twice in one turn." {
		t.Errorf("outcome = %+v", o)
	}
	// After the turn, a late call is told so.
	send(wire.HostToolCall{Session: session, Turn: turn, ToolCallID: "c9", ToolName: "read_plan", Input: "{}"})
	expect(`{"type":"host-tool-result","session":"` + session + `","turn":"` + turn + `","toolCallId":"c9","output":{"error":"The session has ended."},"isError":true}`)
}

func TestToolBoundaries(t *testing.T) {
	tests := []struct {
		name    string
		parts   []wire.Message // after tools declares "bash"
		message string
	}{
		{"undeclared own tool", []wire.Message{
			wire.Part{Part: wire.StreamPart{Type: "tool-call", ToolCallID: "x", ToolName: "curl", Input: "{}", ProviderExecuted: true}},
		}, "The Planner's tool calls were out of order: curl was called as the Planner's own tool, but the turn did not declare it."},
		{"result without call", []wire.Message{
			wire.Part{Part: wire.StreamPart{Type: "tool-result", ToolCallID: "x", ToolName: "bash", Result: json.RawMessage(`1`)}},
		}, "The Planner's tool calls were out of order: a tool-result for x did not follow its own tool-call."},
		{"repeated own call", []wire.Message{
			wire.Part{Part: wire.StreamPart{Type: "tool-call", ToolCallID: "x", ToolName: "bash", Input: "{}", ProviderExecuted: true}},
			wire.Part{Part: wire.StreamPart{Type: "tool-call", ToolCallID: "x", ToolName: "bash", Input: "{}", ProviderExecuted: true}},
		}, "The Planner used the tool call id x twice in one turn."},
		{"declaring a host tool's name", []wire.Message{
			wire.Tools{Names: []string{"read_plan"}},
		}, "read_plan is the name of one of Chopin's host tools; the Planner's own tools need other names."},
		{"error part", []wire.Message{
			wire.Part{Part: wire.StreamPart{Type: "error", Error: "The model provider is down."}},
		}, "The model provider is down."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			c := h.rawAttached(t)
			s := newSink()
			session, turn := startRawTurn(t, h, c, s, readPlan)
			send := func(m wire.Message) {
				switch v := m.(type) {
				case wire.Part:
					v.Session, v.Turn = session, turn
					m = v
				case wire.Tools:
					v.Session, v.Turn = session, turn
					m = v
				}
				b, _ := wire.Encode(m)
				writeJSON(t, c, string(b))
			}
			send(wire.Tools{Names: []string{"bash"}})
			for _, p := range tt.parts {
				send(p)
			}
			_, o := s.until(t)
			if o.Status != "failed" || o.Message != tt.message {
				t.Errorf("outcome = %+v\nwant message %q", o, tt.message)
			}
		})
	}
}

func TestStartFailures(t *testing.T) {
	t.Run("start-failed", func(t *testing.T) {
		h := newHarness(t)
		destroyed := make(chan string, 1)
		h.dial(t, client.Config{Handler: client.Handler{
			Start:     func(*client.Session) error { return errors.New("no model configured") },
			Destroyed: func(s *client.Session) { destroyed <- s.ID },
		}})
		s := newSink()
		must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: s}))
		if _, o := s.until(t); o.Status != "failed" || o.Message != "The Planner could not start a session: no model configured" {
			t.Errorf("outcome = %+v", o)
		}
	})
	t.Run("no answer within the timeout", func(t *testing.T) {
		h := newHarness(t, func(o *agentconn.Options) { o.AnswerTimeout = 50 * time.Millisecond })
		c := h.rawAttached(t)
		s := newSink()
		must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: s}))
		var start wire.Start
		decodeServer(t, readFrame(t, c), &start)
		if start.Mode != "planner" {
			t.Errorf("mode = %q", start.Mode)
		}
		if got := readFrame(t, c); got != `{"type":"destroy","session":"`+start.Session+`"}` {
			t.Errorf("after the timeout: %s", got)
		}
		if _, o := s.until(t); o.Status != "failed" || o.Message != "The Planner did not answer within 10 seconds, so its session was not started." {
			t.Errorf("outcome = %+v", o)
		}
		// A late started is ignored.
		writeJSON(t, c, `{"type":"started","session":"`+start.Session+`"}`)
	})
}

func TestStopAbortsTurn(t *testing.T) {
	h := newHarness(t)
	toolCtx := make(chan context.Context, 1)
	h.host.tools["read_plan"] = func(ctx context.Context, _ agentconn.ToolCall) (json.RawMessage, error) {
		toolCtx <- ctx
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h.dial(t, client.Config{Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		_, err := tr.CallTool(ctx, "read_plan", struct{}{})
		if err == nil || !tr.Aborted() {
			t.Errorf("a call waiting at abort: %v, aborted %v", err, tr.Aborted())
		}
		return nil
	}}})
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Tools: []wire.Tool{readPlan}, Sink: s}))
	tctx := recv(t, toolCtx)
	out, err := h.srv.Stop(context.Background(), "doc1", "")
	if err != nil || !out.Aborted {
		t.Fatalf("Stop = %+v, %v", out, err)
	}
	<-tctx.Done() // host tools stop at abort
	if _, o := s.until(t); o.Status != "aborted" {
		t.Errorf("outcome = %+v", o)
	}
}

func TestAbortTimeout(t *testing.T) {
	h := newHarness(t, func(o *agentconn.Options) { o.AnswerTimeout = 50 * time.Millisecond })
	c := h.rawAttached(t)
	s := newSink()
	startRawTurn(t, h, c, s)
	go func() { _, _ = h.srv.Stop(context.Background(), "doc1", "") }()
	if got := readFrame(t, c); got[:16] != `{"type":"abort",` {
		t.Fatalf("got %s", got)
	}
	if _, o := s.until(t); o.Status != "aborted" || o.Message != "The Planner did not confirm it stopped within 10 seconds, so the turn was ended." {
		t.Errorf("outcome = %+v", o)
	}
}

func TestCloseFailsTurn(t *testing.T) {
	h := newHarness(t)
	toolCtx := make(chan context.Context, 1)
	h.host.tools["read_plan"] = func(ctx context.Context, _ agentconn.ToolCall) (json.RawMessage, error) {
		toolCtx <- ctx
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c := h.rawAttached(t)
	s := newSink()
	session, turn := startRawTurn(t, h, c, s, readPlan)
	writeJSON(t, c, `{"type":"part","session":"`+session+`","turn":"`+turn+`","part":{"type":"text-start","id":"a"}}`)
	writeJSON(t, c, `{"type":"host-tool-call","session":"`+session+`","turn":"`+turn+`","toolCallId":"c","toolName":"read_plan","input":"{}"}`)
	tctx := recv(t, toolCtx)
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
	_ = c.Close()
	<-tctx.Done()
	if _, o := s.until(t); o.Status != "failed" || o.Message != "The Planner's connection closed before the reply was finished." {
		t.Errorf("outcome = %+v", o)
	}
	h.waitStatus(t, "doc1", agentconn.PlannerGrace)
}

func TestIsolatedSession(t *testing.T) {
	h := newHarness(t)
	c := h.rawAttached(t)
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Mode: "isolated", Prompt: "p", Sink: s}))
	if got := readFrame(t, c); !regexpMatch(`^\{"type":"start","session":"[^"]+","mode":"isolated"\}$`, got) {
		t.Errorf("start = %s", got)
	}
}
