package agentconn_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// wait is how long a test waits for something that should happen. It is
// generous: a loaded CI machine is slow, and nothing here measures speed.
const wait = 10 * time.Second

// fakeHost is the application as agentconn sees it: two accounts, a few
// documents, host tools from a table, and channels recording every call.
type fakeHost struct {
	mu        sync.Mutex
	tokens    map[string]string // bearer -> login
	docs      map[string]agentconn.Document
	forbidden map[string]bool // logins without push access
	docErr    error
	accessErr error
	askErr    error
	tools     map[string]func(context.Context, agentconn.ToolCall) (json.RawMessage, error)

	planner   chan plannerEvent
	checked   chan error // each access check's outcome, as it is made
	asked     chan *agentconn.Question
	withdrawn chan *agentconn.Question
	runs      chan agentconn.RunsReport
}

type plannerEvent struct {
	doc    string
	status agentconn.PlannerStatus
}

func newFakeHost() *fakeHost {
	return &fakeHost{
		tokens: map[string]string{"tok-ana": "ana", "tok-bo": "bo"},
		docs: map[string]agentconn.Document{
			"doc1": {ID: "doc1", Title: "Storage plan", Repository: "octo/score", URL: "http://127.0.0.1:8787/documents/doc1"},
			"doc2": {ID: "doc2", Title: "Second", Repository: "octo/other", URL: "http://127.0.0.1:8787/documents/doc2"},
			"old":  {ID: "old", Title: "Old", Repository: "octo/score", URL: "http://127.0.0.1:8787/documents/old", Archived: true},
		},
		forbidden: map[string]bool{},
		tools:     map[string]func(context.Context, agentconn.ToolCall) (json.RawMessage, error){},
		planner:   make(chan plannerEvent, 1000),
		checked:   make(chan error, 1000),
		asked:     make(chan *agentconn.Question, 1000),
		withdrawn: make(chan *agentconn.Question, 1000),
		runs:      make(chan agentconn.RunsReport, 1000),
	}
}

func (h *fakeHost) Authenticate(_ context.Context, bearer string) (agentconn.Account, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if login, ok := h.tokens[bearer]; ok {
		return agentconn.Account{Login: login}, nil
	}
	return agentconn.Account{}, agentconn.ErrUnauthorized
}

func (h *fakeHost) Document(_ context.Context, ref string) (agentconn.Document, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.docErr != nil {
		return agentconn.Document{}, h.docErr
	}
	for _, d := range h.docs {
		if d.ID == ref || d.URL == ref {
			return d, nil
		}
	}
	return agentconn.Document{}, agentconn.ErrDocumentNotFound
}

func (h *fakeHost) Access(_ context.Context, a agentconn.Account, _ agentconn.Document) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.accessErr
	if err == nil && h.forbidden[a.Login] {
		err = agentconn.ErrForbidden
	}
	select {
	case h.checked <- err:
	default:
	}
	return err
}

func (h *fakeHost) PlannerChanged(doc string, st agentconn.PlannerStatus) {
	h.planner <- plannerEvent{doc, st}
}

func (h *fakeHost) CallTool(ctx context.Context, call agentconn.ToolCall) (json.RawMessage, error) {
	h.mu.Lock()
	f := h.tools[call.Name]
	h.mu.Unlock()
	if f == nil {
		return json.RawMessage(`{"tool":"` + call.Name + `"}`), nil
	}
	return f(ctx, call)
}

func (h *fakeHost) Ask(_ context.Context, q *agentconn.Question) error {
	h.mu.Lock()
	err := h.askErr
	h.mu.Unlock()
	if err != nil {
		return err
	}
	h.asked <- q
	return nil
}

func (h *fakeHost) Withdraw(q *agentconn.Question) { h.withdrawn <- q }

func (h *fakeHost) Runs(_ string, r agentconn.RunsReport) { h.runs <- r }

func (h *fakeHost) set(f func(h *fakeHost)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

// sink records one turn's events in order.
type sink struct{ events chan any }

func newSink() *sink { return &sink{events: make(chan any, 10000)} }

func (s *sink) Part(p wire.StreamPart)             { s.events <- p }
func (s *sink) ToolCall(e agentconn.ToolCallEvent) { s.events <- e }
func (s *sink) End(o agentconn.TurnOutcome)        { s.events <- o }

// until collects events up to End.
func (s *sink) until(t testing.TB) ([]any, agentconn.TurnOutcome) {
	t.Helper()
	var got []any
	for {
		ev := recv(t, s.events)
		if o, ok := ev.(agentconn.TurnOutcome); ok {
			return got, o
		}
		got = append(got, ev)
	}
}

func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		var zero T
		t.Fatalf("timed out waiting for %T", zero)
		return zero
	}
}

// harness is a Server under httptest with a fake host.
type harness struct {
	srv  *agentconn.Server
	ts   *httptest.Server
	host *fakeHost
	url  string
	now  time.Time
}

func newHarness(t testing.TB, configure ...func(*agentconn.Options)) *harness {
	t.Helper()
	h := &harness{host: newFakeHost(), now: time.Date(2026, 10, 10, 19, 40, 0, 0, time.UTC)}
	opts := agentconn.Options{
		Host:          h.host,
		Grace:         2 * time.Minute,
		Ping:          time.Second,
		Timeout:       wait * 3,
		MaxSilence:    wait * 6,
		AnswerTimeout: wait,
		Clock:         func() time.Time { return h.now },
	}
	for _, c := range configure {
		c(&opts)
	}
	h.srv = agentconn.New(opts)
	h.ts = httptest.NewServer(h.srv)
	h.url = h.ts.URL + "/api/v1/agent"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = h.srv.Shutdown(ctx)
		h.ts.Close()
	})
	return h
}

// dial attaches a client as ana to doc1 unless cfg says otherwise.
func (h *harness) dial(t testing.TB, cfg client.Config) *client.Link {
	t.Helper()
	l, err := h.tryDial(cfg)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func (h *harness) tryDial(cfg client.Config) (*client.Link, error) {
	cfg.URL = h.url
	if cfg.Token == "" {
		cfg.Token = "tok-ana"
	}
	if cfg.Document == "" {
		cfg.Document = "doc1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return client.Dial(ctx, cfg)
}

// waitStatus waits for the document's Planner to reach state.
func (h *harness) waitStatus(t testing.TB, doc string, state agentconn.PlannerState) agentconn.PlannerStatus {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		st := h.srv.Status(doc)
		if st.State == state {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status of %s is %+v, want %s", doc, st, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// raw opens a WebSocket with gorilla directly, for what the client would not send.
func (h *harness) raw(t testing.TB, header http.Header) *websocket.Conn {
	t.Helper()
	c, resp, err := h.rawDial(header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("raw dial: %v (HTTP %d)", err, status)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (h *harness) rawDial(header http.Header) (*websocket.Conn, *http.Response, error) {
	if header == nil {
		header = http.Header{"Authorization": {"Bearer tok-ana"}}
	}
	d := websocket.Dialer{Subprotocols: []string{wire.Subprotocol}}
	return d.Dial("ws"+strings.TrimPrefix(h.url, "http"), header)
}

// rawAttached opens a raw socket and attaches it to doc1 as ana.
func (h *harness) rawAttached(t testing.TB) *websocket.Conn {
	t.Helper()
	c := h.raw(t, nil)
	writeJSON(t, c, `{"type":"attach","version":1,"document":"doc1"}`)
	if got := readFrame(t, c); !strings.HasPrefix(got, `{"type":"attached"`) {
		t.Fatalf("attach answered %s", got)
	}
	return c
}

func writeJSON(t testing.TB, c *websocket.Conn, frame string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func readFrame(t testing.TB, c *websocket.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(data)
}

// readClose reads to the close frame: the frames before it, its code and reason.
func readClose(t testing.TB, c *websocket.Conn) (frames []string, code int, reason string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			ce, ok := err.(*websocket.CloseError)
			if !ok {
				t.Fatalf("read ended without a close frame: %v (frames %q)", err, frames)
			}
			return frames, ce.Code, ce.Text
		}
		frames = append(frames, string(data))
	}
}

// expectClose asserts the exact last frame before the close, and the close.
func expectClose(t testing.TB, c *websocket.Conn, lastFrame string, code int, reason string) {
	t.Helper()
	frames, gotCode, gotReason := readClose(t, c)
	if lastFrame != "" && (len(frames) == 0 || frames[len(frames)-1] != lastFrame) {
		t.Errorf("frames before close = %q\nwant last %s", frames, lastFrame)
	}
	if gotCode != code || gotReason != reason {
		t.Errorf("close = %d %q, want %d %q", gotCode, gotReason, code, reason)
	}
}

func waitDone(t testing.TB, l *client.Link) *client.CloseError {
	t.Helper()
	select {
	case <-l.Done():
		return l.Err()
	case <-time.After(wait):
		t.Fatal("the link did not close")
		return nil
	}
}
