package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// These tests cover what the agentconn contract suite, which drives the real
// server with this client, does not: the client's own arithmetic and how it
// settles what waits on it. The server here is scripted frame by frame.

const wait = 10 * time.Second

// server is a scripted chopin.agent.v1 server. It answers each attach with
// attached (or with refuse, when set) and hands the socket to the test.
type server struct {
	url    string
	conns  chan *websocket.Conn
	refuse string // a refused frame to answer attach with
}

func newServer(t *testing.T, refuse string) *server {
	t.Helper()
	s := &server{conns: make(chan *websocket.Conn, 1), refuse: refuse}
	up := websocket.Upgrader{Subprotocols: []string{wire.Subprotocol}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"code":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		if _, _, err := c.ReadMessage(); err != nil { // attach
			return
		}
		if s.refuse != "" {
			_ = c.WriteMessage(websocket.TextMessage, []byte(s.refuse))
			_ = c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4409, "planner-attached"))
			return
		}
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"attached","version":1,"document":{"id":"d","title":"D","repository":"o/r"}}`))
		s.conns <- c
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// dial attaches a client with handler and returns both ends.
func (s *server) dial(t *testing.T, h Handler) (*Link, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	l, err := Dial(ctx, Config{URL: s.url, Token: "tok", Document: "d", Handler: h})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	select {
	case c := <-s.conns:
		t.Cleanup(func() { _ = c.Close() })
		return l, c
	case <-time.After(wait):
		t.Fatal("the server got no socket")
		return nil, nil
	}
}

func send(t *testing.T, c *websocket.Conn, frame string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// read reads the client's next message, strictly.
func read(t *testing.T, c *websocket.Conn) wire.Message {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	m, err := wire.DecodeClientFrame(data)
	if err != nil {
		t.Fatalf("the client sent %s: %v", data, err)
	}
	return m
}

// startTurn starts session s1 and its turn t1 on the client.
func startTurn(t *testing.T, c *websocket.Conn) {
	t.Helper()
	send(t, c, `{"type":"start","session":"s1","mode":"planner"}`)
	if m, ok := read(t, c).(wire.Started); !ok || m.Session != "s1" {
		t.Fatalf("start answered %#v", m)
	}
	send(t, c, `{"type":"turn","session":"s1","turn":"t1","prompt":"p","tools":[{"name":"read_plan"}]}`)
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal("timed out")
		var zero T
		return zero
	}
}

func TestDialErrors(t *testing.T) {
	s := newServer(t, `{"type":"refused","code":"planner-attached","message":"octocat is connected to this document."}`)
	ctx := context.Background()

	_, err := Dial(ctx, Config{URL: s.url, Token: "wrong", Document: "d"})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 401 || !strings.Contains(he.Body, "unauthorized") {
		t.Errorf("bad token: %v", err)
	}

	_, err = Dial(ctx, Config{URL: s.url, Token: "tok", Document: "d"})
	var r *Refusal
	if !errors.As(err, &r) || r.Code != "planner-attached" || r.CloseCode != 4409 || r.Message != "octocat is connected to this document." {
		t.Errorf("refused: %v", err)
	}
}

// TestAskSettles covers every way a question's wait ends.
func TestAskSettles(t *testing.T) {
	confirm := wire.Input{Method: wire.MethodConfirm, Title: "Ship?"}
	// asking starts a turn that asks confirm (with ctx from the test) and
	// returns the server's end and the Ask's outcome.
	asking := func(t *testing.T, ctx context.Context) (*websocket.Conn, wire.InputRequest, <-chan Result, <-chan error) {
		s := newServer(t, "")
		results, errs := make(chan Result, 1), make(chan error, 1)
		_, c := s.dial(t, Handler{Turn: func(_ context.Context, tr *Turn) error {
			r, err := tr.Session.Ask(ctx, confirm, AskOptions{Request: "r1"})
			results <- r
			errs <- err
			return nil
		}})
		startTurn(t, c)
		req, ok := read(t, c).(wire.InputRequest)
		if !ok || req.Request != "r1" || req.Session != "s1" || req.Input.Method != "confirm" {
			t.Fatalf("asked %#v", req)
		}
		return c, req, results, errs
	}

	t.Run("answered", func(t *testing.T) {
		c, _, results, errs := asking(t, context.Background())
		send(t, c, `{"type":"input-result","request":"r1","status":"answered","value":true}`)
		if r := recv(t, results); r.Status != "answered" || !r.Yes || recv(t, errs) != nil {
			t.Errorf("result = %+v", r)
		}
	})
	t.Run("cancelled by its caller", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		c, _, results, errs := asking(t, ctx)
		cancel()
		if m, ok := read(t, c).(wire.InputCancel); !ok || m.Request != "r1" {
			t.Fatalf("after cancel the client sent %#v", m)
		}
		// The wait ends with the server's answer to the cancel, not before.
		send(t, c, `{"type":"input-result","request":"r1","status":"cancelled","value":false}`)
		if r, err := recv(t, results), recv(t, errs); r.Status != "cancelled" || !errors.Is(err, context.Canceled) {
			t.Errorf("result = %+v, %v", r, err)
		}
	})
	t.Run("the session is destroyed", func(t *testing.T) {
		c, _, results, _ := asking(t, context.Background())
		send(t, c, `{"type":"destroy","session":"s1"}`)
		if r := recv(t, results); r.Status != "cancelled" || r.Message != "The session was destroyed." {
			t.Errorf("result = %+v", r)
		}
	})
	t.Run("the link closes", func(t *testing.T) {
		c, _, results, _ := asking(t, context.Background())
		_ = c.Close()
		if r := recv(t, results); r.Status != "cancelled" || r.Message != "The connection closed before the question was answered." {
			t.Errorf("result = %+v", r)
		}
	})
}

// TestCallToolError: an error result is a *ToolResultError that reads as
// the tool's message, and the turn ends failed with it.
func TestCallToolError(t *testing.T) {
	s := newServer(t, "")
	_, c := s.dial(t, Handler{Turn: func(ctx context.Context, tr *Turn) error {
		_, err := tr.CallTool(ctx, "read_plan", map[string]any{})
		var te *ToolResultError
		if !errors.As(err, &te) {
			return fmt.Errorf("not a ToolResultError: %v", err)
		}
		return err
	}})
	startTurn(t, c)
	call, ok := read(t, c).(wire.HostToolCall)
	if !ok || call.ToolName != "read_plan" || call.Input != "{}" {
		t.Fatalf("call = %#v", call)
	}
	send(t, c, `{"type":"host-tool-result","session":"s1","turn":"t1","toolCallId":"`+call.ToolCallID+`","output":{"error":"No such block."},"isError":true}`)
	end, ok := read(t, c).(wire.TurnEnd)
	if !ok || end.Status != "failed" || end.Message != "read_plan: No such block." {
		t.Errorf("turn-end = %#v", end)
	}
}

// TestMalformedServerFrame: a frame the client cannot parse closes the link
// with 4400 malformed-message, as the spec asks of a client.
func TestMalformedServerFrame(t *testing.T) {
	s := newServer(t, "")
	l, c := s.dial(t, Handler{})
	send(t, c, `{"type":"start","session":"s1","mode":"planner","extra":1}`)
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4400 || ce.Text != "malformed-message" {
		t.Errorf("close = %v", err)
	}
	select {
	case <-l.Done():
	case <-time.After(wait):
		t.Fatal("the link did not end")
	}
	if err := l.Send(wire.Detach{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after the close = %v", err)
	}
}

func TestSplitRuns(t *testing.T) {
	stages := func(n, nameLen int) []wire.Stage {
		s := make([]wire.Stage, n)
		for i := range s {
			s[i] = wire.Stage{ID: fmt.Sprintf("s%d", i), Name: strings.Repeat("n", nameLen), Status: "completed"}
		}
		return s
	}
	card := func(id string, s []wire.Stage) wire.RunCard {
		return wire.RunCard{ID: id, Name: id, Status: "running", Stages: s}
	}
	active := []string{"r1"}

	t.Run("without deltas a card keeps its 64 latest stages", func(t *testing.T) {
		c := card("r1", stages(100, 1))
		c.EarlierStages = new(int)
		*c.EarlierStages = 5
		parts, err := splitRuns("s", active, []string{}, []wire.RunCard{c, card("r2", nil)}, false)
		if err != nil || len(parts) != 1 {
			t.Fatalf("%d parts, %v", len(parts), err)
		}
		got := parts[0].Cards
		if len(got[0].Stages) != 64 || got[0].Stages[0].ID != "s36" || *got[0].EarlierStages != 41 {
			t.Errorf("card = %d stages from %s, earlierStages %d", len(got[0].Stages), got[0].Stages[0].ID, *got[0].EarlierStages)
		}
		if got[1].Stages == nil {
			t.Error("a card without stages must send [], not null")
		}
	})
	t.Run("without deltas a report over a frame is an error", func(t *testing.T) {
		if _, err := splitRuns("s", active, []string{}, []wire.RunCard{card("r1", stages(64, 40000))}, false); err == nil {
			t.Error("a 2.5 MB report was accepted")
		}
	})
	for _, tt := range []struct {
		name  string
		cards []wire.RunCard
		parts int
	}{
		{"with deltas more than 64 stages go in a delta part", []wire.RunCard{card("r1", stages(100, 1))}, 2},
		{"with deltas a report over a frame is split", []wire.RunCard{card("r1", stages(700, 4000)), card("r2", stages(3, 1))}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parts, err := splitRuns("s", active, []string{}, tt.cards, true)
			if err != nil || len(parts) != tt.parts {
				t.Fatalf("%d parts, %v; want %d", len(parts), err, tt.parts)
			}
			got := make(map[string][]wire.Stage)
			for i, p := range parts {
				frame, err := wire.Encode(p)
				if err != nil || len(frame) > wire.MaxFrameBytes {
					t.Fatalf("part %d: %d bytes, %v", i, len(frame), err)
				}
				if _, err := wire.DecodeClientFrame(frame); err != nil {
					t.Fatalf("part %d is not a valid runs message: %v", i, err)
				}
				if !slices.Equal(p.Active, active) || len(p.Cards) != len(tt.cards) {
					t.Errorf("part %d: active %v, %d cards", i, p.Active, len(p.Cards))
				}
				for _, c := range p.Cards {
					if c.StagesDelta != (i > 0) || i > 0 && c.EarlierStages != nil || i == 0 && len(c.Stages) > 64 {
						t.Errorf("part %d card %s: delta %v, %d stages", i, c.ID, c.StagesDelta, len(c.Stages))
					}
					got[c.ID] = append(got[c.ID], c.Stages...)
				}
			}
			for _, c := range tt.cards {
				if !slices.EqualFunc(got[c.ID], c.Stages, func(a, b wire.Stage) bool { return a.ID == b.ID }) {
					t.Errorf("card %s: the parts carry %d stages, not its %d in order", c.ID, len(got[c.ID]), len(c.Stages))
				}
			}
		})
	}
}
