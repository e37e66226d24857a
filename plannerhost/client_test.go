package plannerhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
)

// Helpers of the agent connection's contract suite: a real app on port 0,
// agentconn/client over a real socket, and the browser socket beside it.

// attach attaches a Planner to document (an ID or URL) with handler.
func (ta *testApp) attach(document string, h client.Handler) *client.Link {
	ta.T.Helper()
	l, err := ta.dialAgent(document, h)
	if err != nil {
		ta.T.Fatalf("attach %s: %v", document, err)
	}
	ta.T.Cleanup(func() { l.Close() })
	return l
}

func (ta *testApp) dialAgent(document string, h client.Handler) (*client.Link, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	return client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: document, Handler: describing(h)})
}

// turns is a Handler whose turns are handed to the test one by one: the
// test drives each turn and finishes it by sending on done (nil finishes
// it, an error fails it).
type turns struct {
	ch chan *testTurn
}

type testTurn struct {
	*client.Turn
	ctx  context.Context
	done chan error
}

func newTurns() *turns { return &turns{ch: make(chan *testTurn, 8)} }

func (ts *turns) handler() client.Handler {
	return client.Handler{Turn: func(ctx context.Context, t *client.Turn) error {
		tt := &testTurn{Turn: t, ctx: ctx, done: make(chan error, 1)}
		ts.ch <- tt
		select {
		case err := <-tt.done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
}

func (ts *turns) next(t testing.TB) *testTurn {
	t.Helper()
	select {
	case tt := <-ts.ch:
		return tt
	case <-time.After(apptest.Wait):
		t.Fatal("no turn arrived")
		return nil
	}
}

// call calls a host tool of the turn.
func (tt *testTurn) call(t testing.TB, name string, input any) []byte {
	t.Helper()
	out, err := tt.CallTool(tt.ctx, name, input)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// callError calls a host tool that must fail and returns its message.
func (tt *testTurn) callError(t testing.TB, name string, input string) string {
	t.Helper()
	_, err := tt.CallToolID(tt.ctx, "e-"+time.Now().Format("150405.000000000"), name, input)
	var re *client.ToolResultError
	if !errors.As(err, &re) {
		t.Fatalf("%s %s: want a tool error, got %v", name, input, err)
	}
	var e struct{ Error string }
	if err := json.Unmarshal(re.Output, &e); err != nil || e.Error == "" {
		t.Fatalf("%s: error output %s", name, re.Output)
	}
	return e.Error
}

// closed waits for the link to end and returns how.
func closed(t testing.TB, l *client.Link) *client.CloseError {
	t.Helper()
	select {
	case <-l.Done():
		return l.Err()
	case <-time.After(apptest.Wait):
		t.Fatal("the link did not close")
		return nil
	}
}

// refusal reads a link's end as a refusal with its close code.
func wantRefused(t testing.TB, ce *client.CloseError, code string, closeCode int, message string) {
	t.Helper()
	if ce == nil || ce.Refused == nil || ce.Refused.Code != code || ce.Code != closeCode || (message != "" && ce.Refused.Message != message) {
		var got wire.Refused
		if ce != nil && ce.Refused != nil {
			got = *ce.Refused
		}
		t.Fatalf("closed %+v refused %+v; want %s %d %q", ce, got, code, closeCode, message)
	}
}

// chatSnapshot opens a browser socket on the document and returns the
// chat:snapshot it is greeted with.
func (ta *testApp) chatSnapshot(channelID string) []map[string]any {
	ta.T.Helper()
	rc := ta.OpenRoom(channelID)
	defer rc.Conn.Close()
	var out []map[string]any
	for _, m := range rc.Until("chat:snapshot")["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// describing is h with the document's descriptions answered: the app asks
// an attached Planner for them in isolated turns (app's describe tests),
// which these tests of other things leave out of their own handlers.
func describing(h client.Handler) client.Handler {
	turn := h.Turn
	h.Turn = func(ctx context.Context, t *client.Turn) error {
		if t.Session.Mode == wire.ModeIsolated {
			return t.Text(`{"description":"Plan for the launch"}`)
		}
		if turn == nil {
			return nil
		}
		return turn(ctx, t)
	}
	return h
}
