package planner

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
)

// DefaultBaseURL is Ollama's OpenAI-compatible API on this computer.
const DefaultBaseURL = "http://127.0.0.1:11434/v1"

// ModelServer is an OpenAI-compatible model server: the part of its API a
// Planner needs, GET /models and streamed POST /chat/completions.
type ModelServer struct {
	baseURL string // such as http://127.0.0.1:11434/v1, without a trailing slash
	apiKey  string // sent as the bearer; never logged, never in an error
	http    *http.Client
}

// NewModelServer checks baseURL and returns its server. A base URL without
// a path gets /v1, where every OpenAI-compatible server serves the API. An
// empty apiKey sends no Authorization header; hc nil uses a client of its own
// (streams have no overall timeout: a local model may think for minutes).
func NewModelServer(baseURL, apiKey string, hc *http.Client) (*ModelServer, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the model server URL %q is not an http:// or https:// URL, such as %s", baseURL, DefaultBaseURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("the model server URL must not hold a user name or password; put the key in OPENAI_API_KEY")
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path == "" {
		u.Path = "/v1"
	}
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		hc = &http.Client{Transport: t}
	}
	return &ModelServer{baseURL: u.String(), apiKey: apiKey, http: hc}, nil
}

// BaseURL is the server's API base, as errors name it.
func (s *ModelServer) BaseURL() string { return s.baseURL }

// String names the server without its key, so printing it is safe.
func (s *ModelServer) String() string { return s.baseURL }

// Model is one entry of GET /models.
type Model struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by,omitempty"`
	// InputModalities is what the model reads, where the server says
	// (input_modalities, or OpenRouter's architecture.input_modalities).
	InputModalities []string `json:"input_modalities,omitempty"`
	Architecture    *struct {
		InputModalities []string `json:"input_modalities,omitempty"`
	} `json:"architecture,omitempty"`
}

// Models lists the models the server has. The error is an
// *UnreachableError, a *StatusError, or says the answer could not be read.
func (s *ModelServer) Models(ctx context.Context) ([]Model, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.baseURL+"/models", nil)
	if err != nil {
		return nil, err
	}
	s.authorize(req)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, s.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, s.statusError(resp)
	}
	var list struct {
		Data []Model `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("the model server at %s sent a list of models that could not be read: %v", s.baseURL, err)
	}
	return list.Data, nil
}

// ChatRequest is the body of POST /chat/completions.
type ChatRequest struct {
	Model    string         `json:"model"`
	Messages []ChatMessage  `json:"messages"`
	Tools    []FunctionTool `json:"tools,omitempty"`
	Stream   bool           `json:"stream"`
	// StreamOptions asks for the token counts in the stream's last chunk.
	StreamOptions  *StreamOptions  `json:"stream_options,omitempty"`
	ResponseFormat json.RawMessage `json:"response_format,omitempty"`
	// ReasoningEffort is a thinking level (low, medium, high) for servers
	// that take one; empty leaves it to the model.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
}

// StreamOptions are a streamed request's options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatMessage is one message of the conversation.
type ChatMessage struct {
	Role       string     `json:"role"` // system, user, assistant or tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Parts, when set, are sent as content instead of Content: a user
	// message with images or files (attachments).
	Parts []ContentPart `json:"-"`
}

// FunctionTool offers the model one tool.
type FunctionTool struct {
	Type     string      `json:"type"` // function
	Function FunctionDef `json:"function"`
}

// FunctionDef is a tool's name, description and JSON Schema parameters.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolCall is a call the model made, assembled from its deltas.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // function
	Function FunctionCall `json:"function"`
}

// FunctionCall is a tool call's name and its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage counts a completion's tokens, as far as the server says.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	PromptDetails    *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

// Completion is one finished streamed completion.
type Completion struct {
	Content      string
	ToolCalls    []ToolCall // by index, as the model numbered them
	FinishReason string     // as the server sent it; empty if it sent none
	Usage        *Usage     // nil when the server sent no counts
}

// EventKind says what an Event carries.
type EventKind int

// The events of a streamed completion.
const (
	EventText      EventKind = iota // Delta is more of the answer
	EventReasoning                  // Delta is more of the model's reasoning
	EventToolStart                  // the tool call Index has a name (and ID, when the server sent one)
	EventToolInput                  // Delta is more of tool call Index's arguments
)

// Event is one piece of a streamed completion, in the order it arrived.
// A tool call's arguments never arrive before its EventToolStart.
type Event struct {
	Kind  EventKind
	Index int // tool events: the call's position in Completion.ToolCalls
	ID    string
	Name  string
	Delta string
}

// Stream posts req with stream: true and calls on with each event as it
// arrives. Cancelling ctx cancels the request. An error from on ends the
// stream with that error. A server that answers with one JSON completion
// instead of a stream is read the same way.
func (s *ModelServer) Stream(ctx context.Context, req ChatRequest, on func(Event) error) (Completion, error) {
	req.Stream = true
	body, err := json.Marshal(req)
	if err != nil {
		return Completion{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, s.baseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return Completion{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	s.authorize(hreq)
	resp, err := s.http.Do(hreq)
	if err != nil {
		return Completion{}, s.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Completion{}, s.statusError(resp)
	}
	a := &assembler{on: on}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if media == "application/json" {
		err = a.whole(resp.Body)
	} else {
		err = a.stream(resp.Body)
	}
	if err != nil {
		if ctx.Err() != nil {
			return Completion{}, ctx.Err()
		}
		var se *StatusError
		if errors.As(err, &se) {
			se.BaseURL = s.baseURL
			return Completion{}, se
		}
		var cb callbackError
		if errors.As(err, &cb) {
			return Completion{}, cb.err
		}
		return Completion{}, fmt.Errorf("the model server at %s broke off its answer: %v", s.baseURL, err)
	}
	return a.completion(), nil
}

func (s *ModelServer) authorize(req *http.Request) {
	if s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
	}
}

// UnreachableError is a model server that did not answer at all.
type UnreachableError struct {
	BaseURL string
	Reason  string // in words: "connection refused"
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("The model server at %s did not answer: %s. Is it running?", e.BaseURL, e.Reason)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func (s *ModelServer) unreachable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &UnreachableError{BaseURL: s.baseURL, Reason: netReason(err), Err: err}
}

// netReason says in a few words why a request got no answer.
func netReason(err error) string {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case errors.As(err, &dns):
		return "there is no host named " + dns.Name
	case errors.As(err, &unknownCA), errors.As(err, &hostname):
		return "its TLS certificate was not accepted (" + err.Error() + ")"
	case errors.As(err, &ne) && ne.Timeout():
		return "it did not answer in time"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// StatusError is the model server answering with an HTTP error, or an error
// in the middle of its stream (Status 0).
type StatusError struct {
	BaseURL string
	Status  int
	Message string // the server's own words, when it sent any
	NoKey   bool   // no API key was sent
}

func (e *StatusError) Error() string {
	msg := strings.TrimRight(e.Message, ".")
	switch {
	case e.Status == 0:
		return fmt.Sprintf("The model server at %s failed while answering: %s.", e.BaseURL, msg)
	case (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden) && e.NoKey:
		return fmt.Sprintf("The model server at %s needs an API key (HTTP %d). Set OPENAI_API_KEY to one it accepts.", e.BaseURL, e.Status)
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return fmt.Sprintf("The model server at %s refused the API key in OPENAI_API_KEY (HTTP %d): %s.", e.BaseURL, e.Status, msg)
	case e.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("The model server at %s is rate limiting (HTTP 429): %s. Try again in a moment.", e.BaseURL, msg)
	case msg == "":
		return fmt.Sprintf("The model server at %s answered HTTP %d.", e.BaseURL, e.Status)
	}
	return fmt.Sprintf("The model server at %s answered HTTP %d: %s.", e.BaseURL, e.Status, msg)
}

func (s *ModelServer) statusError(resp *http.Response) *StatusError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &StatusError{BaseURL: s.baseURL, Status: resp.StatusCode, Message: errorText(raw), NoKey: s.apiKey == ""}
}

// errorText reads an error body: OpenAI's {"error": {"message": ...}},
// {"error": "..."}, or {"message": ...}; else the text itself, shortened.
func errorText(raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var text string
		switch {
		case json.Unmarshal(body.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(body.Error, &text) == nil && text != "":
			return text
		case body.Message != "":
			return body.Message
		}
	}
	text := strings.Join(strings.Fields(string(raw)), " ")
	if r := []rune(text); len(r) > 300 {
		text = string(r[:300]) + "…"
	}
	return text
}

// UnknownModelError is a model the server does not have.
type UnknownModelError struct {
	Model string
	Known []string // the models it has
}

func (e *UnknownModelError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("The model server does not know the model %q; it has no models yet. Add one first (for Ollama: ollama pull qwen2.5).", e.Model)
	}
	return fmt.Sprintf("The model server does not know the model %q; it has: %s.", e.Model, e.list())
}

// list names the known models, the first 20 of a long list.
func (e *UnknownModelError) list() string {
	names, more := e.Known, ""
	if len(names) > 20 {
		names, more = names[:20], fmt.Sprintf(" and %d more", len(e.Known)-20)
	}
	return strings.Join(names, ", ") + more
}

// CheckModel reports whether the server has model: nil, an
// *UnknownModelError, or why it could not tell.
func (s *ModelServer) CheckModel(ctx context.Context, model string) error {
	models, err := s.Models(ctx)
	if err != nil {
		return err
	}
	ids := modelIDs(models)
	if slices.Contains(ids, model) {
		return nil
	}
	return &UnknownModelError{Model: model, Known: ids}
}

func modelIDs(models []Model) []string {
	ids := make([]string, 0, len(models))
	for _, m := range models {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// callbackError is an error Stream's callback returned, passed on as it is.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }
func (e callbackError) Unwrap() error { return e.err }

// assembler turns a completion's chunks into events and the Completion.
type assembler struct {
	on      func(Event) error
	content strings.Builder
	calls   []*pendingCall
	finish  string
	usage   *Usage
	done    bool // [DONE] arrived
}

type pendingCall struct {
	ToolCall
	started bool // EventToolStart was sent
}

// chunk is one chat.completion.chunk, or one whole chat.completion (whose
// choice has message instead of delta).
type chunk struct {
	Choices []struct {
		Delta        *chunkDelta `json:"delta"`
		Message      *chunkDelta `json:"message"`
		FinishReason *string     `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type chunkDelta struct {
	Content          *string `json:"content"`
	ReasoningContent *string `json:"reasoning_content"` // llama.cpp, vLLM, DeepSeek
	Reasoning        *string `json:"reasoning"`         // Ollama, OpenRouter
	ToolCalls        []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// maxEventBytes bounds one server-sent event, so a server that never ends a
// line cannot fill memory.
const maxEventBytes = 16 << 20

// stream reads server-sent events: data: lines, joined until a blank line,
// until [DONE] or the end of the body.
func (a *assembler) stream(body io.Reader) error {
	err := readEvents(body, maxEventBytes, func(data string) (bool, error) {
		if strings.TrimSpace(data) == "[DONE]" {
			a.done = true
			return true, nil
		}
		return false, a.chunk([]byte(data))
	})
	if err != nil {
		return err
	}
	if !a.done && a.finish == "" {
		return errors.New("the stream ended before the answer was finished")
	}
	return nil
}

// whole reads a server that ignored stream: true and sent one completion.
func (a *assembler) whole(body io.Reader) error {
	raw, err := io.ReadAll(io.LimitReader(body, maxEventBytes))
	if err != nil {
		return err
	}
	return a.chunk(raw)
}

func (a *assembler) chunk(raw []byte) error {
	var c chunk
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("a chunk could not be read: %v", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return &StatusError{Message: errorText(raw)}
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d != nil {
			if err := a.delta(d); err != nil {
				return callbackError{err}
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
	return nil
}

func (a *assembler) delta(d *chunkDelta) error {
	// A server sends one of the two; one that sends both means the same.
	r := d.ReasoningContent
	if r == nil || *r == "" {
		r = d.Reasoning
	}
	if r != nil && *r != "" {
		if err := a.on(Event{Kind: EventReasoning, Delta: *r}); err != nil {
			return err
		}
	}
	if d.Content != nil && *d.Content != "" {
		a.content.WriteString(*d.Content)
		if err := a.on(Event{Kind: EventText, Delta: *d.Content}); err != nil {
			return err
		}
	}
	for _, tc := range d.ToolCalls {
		i := a.callIndex(tc.Index, tc.ID)
		c := a.calls[i]
		if c.ID == "" {
			c.ID = tc.ID
		}
		c.Function.Name += tc.Function.Name
		c.Function.Arguments += tc.Function.Arguments
		switch {
		case !c.started && c.Function.Name != "":
			// The arguments so far follow the start, so none come before it.
			c.started = true
			if err := a.on(Event{Kind: EventToolStart, Index: i, ID: c.ID, Name: c.Function.Name}); err != nil {
				return err
			}
			if c.Function.Arguments != "" {
				if err := a.on(Event{Kind: EventToolInput, Index: i, Delta: c.Function.Arguments}); err != nil {
					return err
				}
			}
		case c.started && tc.Function.Arguments != "":
			if err := a.on(Event{Kind: EventToolInput, Index: i, Delta: tc.Function.Arguments}); err != nil {
				return err
			}
		}
	}
	return nil
}

// callIndex finds the call a tool_calls delta continues. Servers number
// calls with index; one that does not is read as continuing the last call
// unless the delta carries a new id.
func (a *assembler) callIndex(index *int, id string) int {
	if index != nil && *index >= 0 && *index < 1024 {
		for len(a.calls) <= *index {
			a.calls = append(a.calls, &pendingCall{ToolCall: ToolCall{Type: "function"}})
		}
		return *index
	}
	if n := len(a.calls); n > 0 && (id == "" || a.calls[n-1].ID == id) {
		return n - 1
	}
	a.calls = append(a.calls, &pendingCall{ToolCall: ToolCall{Type: "function"}})
	return len(a.calls) - 1
}

func (a *assembler) completion() Completion {
	c := Completion{Content: a.content.String(), FinishReason: a.finish, Usage: a.usage}
	for _, p := range a.calls {
		c.ToolCalls = append(c.ToolCalls, p.ToolCall)
	}
	return c
}
