package planner_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/planner"
)

// wait is how long a test waits for something that should happen; nothing
// here measures speed.
const wait = 10 * time.Second

const (
	agentToken = "chopin_a_test-token-never-logged"
	apiKey     = "sk-test-key-never-logged"
	docURL     = "http://127.0.0.1:8787/documents/doc1"
)

// --- a fake OpenAI-compatible model server ---

type recorded struct {
	Auth string
	Req  planner.ChatRequest
}

type fakeModel struct {
	ts     *httptest.Server
	models []string
	chat   func(w http.ResponseWriter, r *http.Request, req planner.ChatRequest)

	mu       sync.Mutex
	requests []recorded
}

func newFakeModel(t *testing.T, chat func(http.ResponseWriter, *http.Request, planner.ChatRequest)) *fakeModel {
	t.Helper()
	m := &fakeModel{models: []string{"qwen2.5", "llama3.2"}, chat: chat}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		data := []map[string]string{}
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, id := range m.models {
			data = append(data, map[string]string{"id": id, "object": "model", "owned_by": "library"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req planner.ChatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad body"}}`, http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.requests = append(m.requests, recorded{Auth: r.Header.Get("Authorization"), Req: req})
		m.mu.Unlock()
		m.chat(w, r, req)
	})
	m.ts = httptest.NewServer(mux)
	t.Cleanup(m.ts.Close)
	return m
}

func (m *fakeModel) setModels(ids []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.models = ids
}

func (m *fakeModel) baseURL() string { return m.ts.URL + "/v1" }

func (m *fakeModel) recorded() []recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]recorded(nil), m.requests...)
}

// sse writes each event as a server-sent event and flushes it.
func sse(w http.ResponseWriter, events ...any) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		data, ok := e.(string)
		if !ok {
			b, _ := json.Marshal(e)
			data = string(b)
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	w.(http.Flusher).Flush()
}

func delta(d map[string]any) map[string]any {
	return map[string]any{"object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": nil}}}
}

func textChunk(s string) map[string]any {
	return delta(map[string]any{"role": "assistant", "content": s})
}
func reasoningChunk(s string) map[string]any { return delta(map[string]any{"reasoning_content": s}) }

func toolChunk(index int, id, name, args string) map[string]any {
	fn := map[string]any{"arguments": args}
	call := map[string]any{"index": index, "function": fn}
	if id != "" {
		call["id"], call["type"], fn["name"] = id, "function", name
	}
	return delta(map[string]any{"tool_calls": []any{call}})
}

func finishChunk(reason string) map[string]any {
	return map[string]any{"object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": reason}}}
}

func usageChunk(in, out int) map[string]any {
	return map[string]any{"object": "chat.completion.chunk", "choices": []any{}, "usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}}
}

const editInput = `{"revision":1,"operations":[{"op":"insert_root","source":"## Risks\n\nNone yet."}]}`

// scriptedPlanner is a model that reads the plan, edits it, then answers.
// It names both of its tool calls call_0, as some servers number each
// round's calls from zero.
func scriptedPlanner(w http.ResponseWriter, _ *http.Request, req planner.ChatRequest) {
	tools := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			tools++
		}
	}
	switch tools {
	case 0:
		sse(w, reasoningChunk("Read the plan "), reasoningChunk("first."),
			toolChunk(0, "call_0", "read_plan", ""), toolChunk(0, "", "", "{"), toolChunk(0, "", "", "}"),
			finishChunk("tool_calls"), usageChunk(100, 10), "[DONE]")
	case 1:
		half := len(editInput) / 2
		sse(w, toolChunk(0, "call_0", "edit_plan", editInput[:half]), toolChunk(0, "", "", editInput[half:]),
			finishChunk("tool_calls"), usageChunk(150, 30), "[DONE]")
	default:
		sse(w, textChunk("I added "), textChunk("a Risks section."), finishChunk("stop"), usageChunk(200, 8), "[DONE]")
	}
}

// --- Chopin's side: agentconn's server with a fake host ---

type fakeHost struct {
	mu    sync.Mutex
	edits []string
}

func (h *fakeHost) Authenticate(_ context.Context, bearer string) (agentconn.Account, error) {
	if bearer == agentToken {
		return agentconn.Account{Login: "ada"}, nil
	}
	return agentconn.Account{}, agentconn.ErrUnauthorized
}

func (h *fakeHost) Document(_ context.Context, ref string) (agentconn.Document, error) {
	switch ref {
	case "doc1", docURL:
		return agentconn.Document{ID: "doc1", Title: "Storage plan", Repository: "ada/score", URL: docURL}, nil
	case "old":
		return agentconn.Document{ID: "old", Title: "Old", Repository: "ada/score", URL: "http://127.0.0.1:8787/documents/old", Archived: true}, nil
	}
	return agentconn.Document{}, agentconn.ErrDocumentNotFound
}

func (h *fakeHost) Access(context.Context, agentconn.Account, agentconn.Document) error { return nil }
func (h *fakeHost) PlannerChanged(string, agentconn.PlannerStatus)                      {}
func (h *fakeHost) Ask(context.Context, *agentconn.Question) error                      { return nil }
func (h *fakeHost) Withdraw(*agentconn.Question)                                        {}
func (h *fakeHost) Runs(string, agentconn.RunsReport)                                   {}

const planText = "document: Storage plan\nrevision: 1\nsize: 17\n\n1: # Storage plan"

func (h *fakeHost) CallTool(_ context.Context, call agentconn.ToolCall) (json.RawMessage, error) {
	switch call.Name {
	case "read_plan":
		b, _ := json.Marshal(planText)
		return b, nil
	case "edit_plan":
		h.mu.Lock()
		h.edits = append(h.edits, string(call.Input))
		h.mu.Unlock()
		return json.RawMessage(`{"revision":2}`), nil
	}
	return nil, &wire.ToolError{Code: "unknown", Message: "no such tool"}
}

// chopin is agentconn's server under httptest, recording the sockets it
// hijacks so a test can drop one as a network would.
type chopin struct {
	srv  *agentconn.Server
	ts   *httptest.Server
	host *fakeHost

	mu    sync.Mutex
	conns []net.Conn
}

func newChopin(t *testing.T) *chopin {
	t.Helper()
	c := &chopin{host: &fakeHost{}}
	c.srv = agentconn.New(agentconn.Options{Host: c.host, Grace: 2 * time.Minute, Timeout: 3 * wait, MaxSilence: 6 * wait, AnswerTimeout: wait})
	c.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.srv.ServeHTTP(&hijackRecorder{ResponseWriter: w, c: c}, r)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = c.srv.Shutdown(ctx)
		c.ts.Close()
	})
	return c
}

type hijackRecorder struct {
	http.ResponseWriter
	c *chopin
}

func (w *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := w.ResponseWriter.(http.Hijacker).Hijack()
	if err == nil {
		w.c.mu.Lock()
		w.c.conns = append(w.c.conns, conn)
		w.c.mu.Unlock()
	}
	return conn, rw, err
}

// drop closes every socket as a failing network would: no close frame.
func (c *chopin) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.conns = nil
}

func (c *chopin) endpoint() (string, error) { return c.ts.URL + "/api/v1/agent", nil }

func (c *chopin) waitState(t *testing.T, state agentconn.PlannerState) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for c.srv.Status("doc1").State != state {
		if time.Now().After(deadline) {
			t.Fatalf("the Planner of doc1 is %s, want %s", c.srv.Status("doc1").State, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sink records one turn's events for Chat.
type sink struct{ events chan any }

func (s *sink) Part(p wire.StreamPart)             { s.events <- p }
func (s *sink) ToolCall(e agentconn.ToolCallEvent) { s.events <- e }
func (s *sink) End(o agentconn.TurnOutcome)        { s.events <- o }

func (s *sink) next(t *testing.T) any {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-time.After(wait):
		t.Fatal("timed out waiting for the turn")
		return nil
	}
}

// until collects the turn's events up to its end.
func (s *sink) until(t *testing.T) ([]any, agentconn.TurnOutcome) {
	t.Helper()
	var got []any
	for {
		ev := s.next(t)
		if o, ok := ev.(agentconn.TurnOutcome); ok {
			return got, o
		}
		got = append(got, ev)
	}
}

var hostTools = []wire.Tool{
	{Name: "read_plan", Description: "Read the plan.", InputSchema: json.RawMessage(`{"type":"object","properties":{"offset":{"type":"integer"}}}`)},
	{Name: "edit_plan", Description: "Edit the plan.", InputSchema: json.RawMessage(`{"type":"object","properties":{"revision":{"type":"integer"},"operations":{"type":"array"}},"required":["revision","operations"]}`)},
}

func (c *chopin) startTurn(t *testing.T, model string) *sink {
	t.Helper()
	s := &sink{events: make(chan any, 1000)}
	err := c.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{
		Prompt:       "@ada: add a risks section",
		Instructions: "You are the Planner of this document.",
		Model:        model,
		Tools:        hostTools,
		Sink:         s,
	})
	if err != nil {
		t.Fatalf("StartTurn: %v", err)
	}
	return s
}

// --- the Planner under test ---

type running struct {
	p     *planner.Planner
	notes chan string
	stop  context.CancelFunc
	done  chan error
	logs  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func newPlanner(t *testing.T, baseURL, model string) (*planner.Planner, chan string, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	notes := make(chan string, 100)
	p, err := planner.New(planner.Config{
		BaseURL: baseURL,
		APIKey:  apiKey,
		Model:   model,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Notify: func(line string) {
			select {
			case notes <- line:
			default: // a test that reads no notes does not hold the Planner up
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	planner.SetBackoff(p, func(int) time.Duration { return 10 * time.Millisecond })
	return p, notes, logs
}

// serve runs the Planner for doc1 until the test ends.
func serve(t *testing.T, c *chopin, p *planner.Planner, document string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, stop: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- p.Serve(ctx, planner.Target{Document: document, Token: agentToken, Endpoint: c.endpoint})
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func (r *running) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(wait):
		t.Fatal("Serve did not return")
		return nil
	}
}

func note(t *testing.T, notes chan string, prefix string) string {
	t.Helper()
	for {
		select {
		case n := <-notes:
			if strings.HasPrefix(n, prefix) {
				return n
			}
		case <-time.After(wait):
			t.Fatalf("no note starting %q", prefix)
			return ""
		}
	}
}

// TestTurnReadsEditsAndAnswers drives a whole turn: the model reads the
// plan, edits it, then answers in text, and Chopin's Chat receives the
// reasoning, the tool input, the host tool rows and the streamed answer.
func TestTurnReadsEditsAndAnswers(t *testing.T) {
	model := newFakeModel(t, scriptedPlanner)
	c := newChopin(t)
	p, notes, logs := newPlanner(t, model.baseURL(), "qwen2.5")
	if err := p.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	r := serve(t, c, p, docURL)
	if got := note(t, notes, "Attached"); got != `Attached to "Storage plan" (`+docURL+`) as its Planner.` {
		t.Errorf("note = %q", got)
	}
	c.waitState(t, agentconn.PlannerAttached)

	events, outcome := c.startTurn(t, "").until(t)
	if outcome.Status != "finished" || outcome.Message != "" {
		t.Fatalf("outcome = %+v", outcome)
	}

	var types []string
	var text, reasoning strings.Builder
	var rows []string
	toolInputs := map[string]string{}
	for _, ev := range events {
		switch e := ev.(type) {
		case wire.StreamPart:
			types = append(types, e.Type)
			switch e.Type {
			case "text-delta":
				text.WriteString(e.Delta)
			case "reasoning-delta":
				reasoning.WriteString(e.Delta)
			case "tool-input-delta":
				toolInputs[e.ID] += e.Delta
			case "stream-start":
				if e.ModelID != "qwen2.5" {
					t.Errorf("stream-start modelId = %q", e.ModelID)
				}
			}
		case agentconn.ToolCallEvent:
			rows = append(rows, e.Name+" "+e.Status)
		}
	}
	want := []string{
		"stream-start",
		"reasoning-start", "reasoning-delta", "reasoning-delta", "reasoning-end",
		"tool-input-start", "tool-input-delta", "tool-input-delta", "tool-input-end", "finish-step",
		"tool-input-start", "tool-input-delta", "tool-input-delta", "tool-input-end", "finish-step",
		"text-start", "text-delta", "text-delta", "text-end", "finish-step", "finish",
	}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("parts:\n got %v\nwant %v", types, want)
	}
	if text.String() != "I added a Risks section." || reasoning.String() != "Read the plan first." {
		t.Errorf("text %q, reasoning %q", text.String(), reasoning.String())
	}
	if got := strings.Join(rows, ", "); got != "read_plan running, read_plan done, edit_plan running, edit_plan done" {
		t.Errorf("tool rows = %s", got)
	}
	c.host.mu.Lock()
	edits := append([]string(nil), c.host.edits...)
	c.host.mu.Unlock()
	if len(edits) != 1 || edits[0] != editInput {
		t.Errorf("edit_plan inputs = %q, want %q", edits, editInput)
	}
	// The model named both calls call_0; the turn used each id once.
	if len(toolInputs) != 2 || toolInputs["call_0"] != "{}" {
		t.Errorf("tool inputs by id = %q", toolInputs)
	}

	reqs := model.recorded()
	if len(reqs) != 3 {
		t.Fatalf("%d requests to the model, want 3", len(reqs))
	}
	first := reqs[0]
	if first.Auth != "Bearer "+apiKey || !first.Req.Stream || first.Req.Model != "qwen2.5" {
		t.Errorf("first request: auth %q, stream %v, model %q", first.Auth, first.Req.Stream, first.Req.Model)
	}
	if m := first.Req.Messages; len(m) != 2 || m[0].Role != "system" || m[0].Content != "You are the Planner of this document." ||
		m[1].Role != "user" || m[1].Content != "@ada: add a risks section" {
		t.Errorf("first messages = %+v", m)
	}
	if tl := first.Req.Tools; len(tl) != 2 || tl[0].Type != "function" || tl[0].Function.Name != "read_plan" ||
		tl[0].Function.Description != "Read the plan." || string(tl[1].Function.Parameters) != string(hostTools[1].InputSchema) {
		t.Errorf("tools = %+v", tl)
	}
	last := reqs[2].Req.Messages
	if len(last) != 6 {
		t.Fatalf("last request has %d messages, want 6: %+v", len(last), last)
	}
	readCall, readResult := last[2], last[3]
	editCall, editResult := last[4], last[5]
	if readCall.Role != "assistant" || len(readCall.ToolCalls) != 1 || readCall.ToolCalls[0].Function.Name != "read_plan" ||
		readResult.Role != "tool" || readResult.ToolCallID != readCall.ToolCalls[0].ID || readResult.Content != planText {
		t.Errorf("read_plan round = %+v / %+v", readCall, readResult)
	}
	if len(editCall.ToolCalls) != 1 || editCall.ToolCalls[0].Function.Arguments != editInput ||
		editResult.ToolCallID != editCall.ToolCalls[0].ID || editResult.ToolCallID == readResult.ToolCallID ||
		editResult.Content != `{"revision":2}` {
		t.Errorf("edit_plan round = %+v / %+v", editCall, editResult)
	}

	// Ctrl-C: the Planner detaches, and its account keeps the document for
	// the grace period.
	r.stop()
	if err := r.result(t); err != nil {
		t.Errorf("Serve = %v", err)
	}
	c.waitState(t, agentconn.PlannerGrace)
	if out := logs.String(); strings.Contains(out, apiKey) || strings.Contains(out, agentToken) {
		t.Errorf("a secret reached the log:\n%s", out)
	}
}

// TestAbortCancelsModelRequest: Stop Planner aborts the turn, and the
// request to the model server ends with it.
func TestAbortCancelsModelRequest(t *testing.T) {
	cancelled := make(chan struct{})
	model := newFakeModel(t, func(w http.ResponseWriter, r *http.Request, _ planner.ChatRequest) {
		sse(w, textChunk("Thinking about it"))
		<-r.Context().Done()
		close(cancelled)
	})
	c := newChopin(t)
	p, _, _ := newPlanner(t, model.baseURL(), "qwen2.5")
	serve(t, c, p, "doc1")
	c.waitState(t, agentconn.PlannerAttached)

	s := c.startTurn(t, "")
	for {
		if part, ok := s.next(t).(wire.StreamPart); ok && part.Type == "text-delta" {
			break
		}
	}
	out, err := c.srv.Stop(context.Background(), "doc1", "")
	if err != nil || !out.Aborted {
		t.Fatalf("Stop = %+v, %v", out, err)
	}
	select {
	case <-cancelled:
	case <-time.After(wait):
		t.Fatal("the model server's request was not cancelled")
	}
	_, outcome := s.until(t)
	// The Planner's own turn-end: the server's timeout would add a message.
	if outcome.Status != "aborted" || outcome.Message != "" {
		t.Errorf("outcome = %+v, want aborted by the Planner", outcome)
	}
}

// TestModelErrorsFailTheTurn: what the model server says goes into the
// turn's failure, for Chat to show.
func TestModelErrorsFailTheTurn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chat  func(http.ResponseWriter, *http.Request, planner.ChatRequest)
		model string
		want  string // %s is the base URL
	}{
		{
			name: "http error",
			chat: func(w http.ResponseWriter, _ *http.Request, _ planner.ChatRequest) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"error":{"message":"model runner has unexpectedly stopped","type":"api_error"}}`)
			},
			want: "The model server at %s answered HTTP 500: model runner has unexpectedly stopped.",
		},
		{
			name: "error mid-stream",
			chat: func(w http.ResponseWriter, _ *http.Request, _ planner.ChatRequest) {
				sse(w, textChunk("Let me"), map[string]any{"error": map[string]any{"message": "context length exceeded"}})
			},
			want: "The model server at %s failed while answering: context length exceeded.",
		},
		{
			name: "stream cut short",
			chat: func(w http.ResponseWriter, _ *http.Request, _ planner.ChatRequest) {
				sse(w, textChunk("Let me"))
			},
			want: "the model server at %s broke off its answer: the stream ended before the answer was finished",
		},
		{
			name: "unknown model",
			chat: func(w http.ResponseWriter, _ *http.Request, req planner.ChatRequest) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"error":{"message":"model %q not found, try pulling it first"}}`, req.Model)
			},
			model: "mistral", // the turn's model wins over --model
			want:  `The model server does not know the model "mistral"; it has: qwen2.5, llama3.2.`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := newFakeModel(t, tc.chat)
			c := newChopin(t)
			p, _, _ := newPlanner(t, model.baseURL(), "qwen2.5")
			serve(t, c, p, "doc1")
			c.waitState(t, agentconn.PlannerAttached)
			_, outcome := c.startTurn(t, tc.model).until(t)
			want := strings.ReplaceAll(tc.want, "%s", model.baseURL())
			if outcome.Status != "failed" || outcome.Message != want {
				t.Errorf("outcome = %+v\nwant failed: %s", outcome, want)
			}
			if reqs := model.recorded(); tc.model != "" && (len(reqs) != 1 || reqs[0].Req.Model != tc.model) {
				t.Errorf("requests = %+v", reqs)
			}
		})
	}
}

// closedURL is a model server URL where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// TestUnreachableModelServer: at start-up and in a turn, a model server
// that does not answer is named, with what to check.
func TestUnreachableModelServer(t *testing.T) {
	base := closedURL(t)
	want := "The model server at " + base + " did not answer: connection refused. Is it running?"
	p, _, _ := newPlanner(t, base, "qwen2.5")
	err := p.Check(context.Background())
	var ue *planner.UnreachableError
	if !errors.As(err, &ue) || err.Error() != want {
		t.Errorf("Check = %v\nwant %s", err, want)
	}

	c := newChopin(t)
	serve(t, c, p, "doc1")
	c.waitState(t, agentconn.PlannerAttached)
	_, outcome := c.startTurn(t, "").until(t)
	if outcome.Status != "failed" || outcome.Message != want {
		t.Errorf("outcome = %+v\nwant failed: %s", outcome, want)
	}
}

// TestCheckModel: --model must be one the server has; without it, the
// server's only model is taken, and several are listed for the person.
func TestCheckModel(t *testing.T) {
	model := newFakeModel(t, scriptedPlanner)
	for _, tc := range []struct {
		name, flag string
		models     []string
		want, use  string
	}{
		{"unknown", "x", []string{"a", "b"}, `The model server does not know the model "x"; it has: a, b.`, ""},
		{"none pulled", "x", nil, `The model server does not know the model "x"; it has no models yet. Add one first (for Ollama: ollama pull qwen2.5).`, ""},
		{"known", "b", []string{"a", "b"}, "", "b"},
		{"only one", "", []string{"qwen2.5"}, "", "qwen2.5"},
		{"several", "", []string{"a", "b"}, "Choose a model with --model; the model server at " + model.baseURL() + " has: a, b.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model.setModels(tc.models)
			p, _, _ := newPlanner(t, model.baseURL(), tc.flag)
			err := p.Check(context.Background())
			switch {
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Check = %v\nwant %s", err, tc.want)
			case tc.want == "" && err != nil:
				t.Errorf("Check = %v", err)
			case tc.want == "" && p.Model() != tc.use:
				t.Errorf("model = %q, want %q", p.Model(), tc.use)
			}
		})
	}
}

// TestAttachErrors: each way Chopin can turn the Planner away is said in
// words, and none is tried again.
func TestAttachErrors(t *testing.T) {
	model := newFakeModel(t, scriptedPlanner)
	c := newChopin(t)
	origin := c.ts.URL
	for _, tc := range []struct {
		name, doc, token string
		endpoint         func() (string, error)
		want             string
	}{
		{
			name: "wrong token", doc: "doc1", token: "chopin_a_wrong",
			want: "Chopin at " + origin + ` did not accept the agent token (HTTP 401). Run "chopin token" where Chopin runs to print the current one.`,
		},
		{
			name: "no such document", doc: "nope",
			want: `nope: No document matches this id or URL, or it is being deleted. Copy the document's address from Chopin and try again.`,
		},
		{
			name: "archived", doc: "old",
			want: "old: The document is archived. Restore it in Chopin, then run this again.",
		},
		{
			name: "not a Chopin", doc: "doc1",
			endpoint: func() (string, error) { return model.ts.URL + "/api/v1/agent", nil },
			want:     "Chopin at " + model.ts.URL + " does not offer the agent connection (HTTP 404): it runs with AGENT=off, or this is not a Chopin server.",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, _ := newPlanner(t, model.baseURL(), "qwen2.5")
			tgt := planner.Target{Document: tc.doc, Token: tc.token, Endpoint: tc.endpoint}
			if tgt.Token == "" {
				tgt.Token = agentToken
			}
			if tgt.Endpoint == nil {
				tgt.Endpoint = c.endpoint
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			err := p.Serve(ctx, tgt)
			var ae *planner.AttachError
			if !errors.As(err, &ae) || err.Error() != tc.want {
				t.Errorf("Serve = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestChopinNotRunning: before the first attach, a Chopin that does not
// answer ends Serve with what to do.
func TestChopinNotRunning(t *testing.T) {
	model := newFakeModel(t, scriptedPlanner)
	p, _, _ := newPlanner(t, model.baseURL(), "qwen2.5")
	closed := strings.TrimSuffix(strings.Replace(closedURL(t), "http", "ws", 1), "/v1") + "/api/v1/agent"
	err := p.Serve(context.Background(), planner.Target{Document: "doc1", Token: agentToken,
		Endpoint: func() (string, error) { return closed, nil }})
	want := "Could not reach Chopin at " + strings.Replace(strings.TrimSuffix(closed, "/api/v1/agent"), "ws", "http", 1) +
		`: connection refused. Is Chopin running? Start it with "chopin".`
	if err == nil || err.Error() != want {
		t.Errorf("Serve = %v\nwant %s", err, want)
	}
}

// TestReattachAfterDrop: a link lost to the network is attached again,
// and turns run on the new one.
func TestReattachAfterDrop(t *testing.T) {
	model := newFakeModel(t, scriptedPlanner)
	c := newChopin(t)
	p, notes, _ := newPlanner(t, model.baseURL(), "qwen2.5")
	serve(t, c, p, "doc1")
	note(t, notes, "Attached to")
	c.waitState(t, agentconn.PlannerAttached)

	c.drop()
	if got := note(t, notes, "The link"); !strings.HasPrefix(got, `The link to "Storage plan" dropped (the connection was lost); attaching again in`) {
		t.Errorf("note = %q", got)
	}
	note(t, notes, "Attached again to")
	c.waitState(t, agentconn.PlannerAttached)
	if _, outcome := c.startTurn(t, "").until(t); outcome.Status != "finished" {
		t.Errorf("turn after reattaching: %+v", outcome)
	}
}

// TestRefusalAfterAttachIsFinal: when Chopin lets the Planner go (here,
// its Planner is reset), Serve ends and says why, rather than retrying.
func TestRefusalAfterAttachIsFinal(t *testing.T) {
	model := newFakeModel(t, scriptedPlanner)
	c := newChopin(t)
	p, _, _ := newPlanner(t, model.baseURL(), "qwen2.5")
	r := serve(t, c, p, "doc1")
	c.waitState(t, agentconn.PlannerAttached)
	c.srv.Reset("doc1")
	err := r.result(t)
	want := "doc1: Chopin let this Planner go: the document was archived or deleted, its Planner was reset, or the agent token was replaced. Run this again to attach anew. " +
		"Chopin said: A repository writer reset this document's connection, so ada is no longer connected. Connect again to resume."
	if err == nil || err.Error() != want {
		t.Errorf("Serve = %v\nwant %s", err, want)
	}
}
