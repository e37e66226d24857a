package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Session is a session the server started.
type Session struct {
	ID   string
	Mode string // planner or isolated
	link *Link

	mu    sync.Mutex
	turns map[string]*Turn
	live  bool // the last runs report listed a live or paused run
}

// Link is the link the session belongs to.
func (s *Session) Link() *Link { return s.currentLink() }

// Turn is one turn the server asked the Planner to run.
type Turn struct {
	Session *Session
	Message wire.Turn // what the server sent: prompt, instructions, tools, model
	link    *Link     // the link the turn runs on; it ends with it

	ctx     context.Context
	cancel  context.CancelFunc
	aborted atomic.Bool
	seq     atomic.Int64
}

// ID is the turn's id.
func (t *Turn) ID() string { return t.Message.Turn }

// Prompt is the turn's prompt.
func (t *Turn) Prompt() string { return t.Message.Prompt }

// Aborted reports whether the server aborted the turn.
func (t *Turn) Aborted() bool { return t.aborted.Load() }

func (t *Turn) abort() {
	t.aborted.Store(true)
	t.cancel()
}

func (l *Link) turn(m wire.Turn) {
	s := l.session(m.Session)
	if s == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Turn{Session: s, Message: m, ctx: ctx, cancel: cancel, link: l}
	s.mu.Lock()
	s.turns[m.Turn] = t
	s.mu.Unlock()
	go func() {
		var err error
		if h := l.cfg.Handler.Turn; h != nil {
			err = h(ctx, t)
		}
		end := wire.TurnEnd{Session: s.ID, Turn: m.Turn, Status: "finished"}
		switch {
		case t.Aborted():
			end.Status = "aborted"
		case err != nil:
			end.Status, end.Message = "failed", cut(err.Error())
		}
		s.mu.Lock()
		delete(s.turns, m.Turn)
		s.mu.Unlock()
		cancel()
		_ = l.Send(end)
	}()
}

func (l *Link) currentTurn(session, turn string) *Turn {
	s := l.session(session)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns[turn]
}

// Send streams one part of the turn.
func (t *Turn) Send(p wire.StreamPart) error {
	return t.link.Send(wire.Part{Session: t.Session.ID, Turn: t.ID(), Part: p})
}

func (t *Turn) newID(prefix string) string { return prefix + strconv.FormatInt(t.seq.Add(1), 10) }

// Text streams text as one text block: start, one delta, end.
func (t *Turn) Text(text string) error { return t.block(wire.PartTextStart, text) }

// Reasoning streams reasoning as one block.
func (t *Turn) Reasoning(text string) error { return t.block(wire.PartReasoningStart, text) }

func (t *Turn) block(startType, text string) error {
	id := t.newID("b")
	delta, end := wire.PartTextDelta, wire.PartTextEnd
	if startType == wire.PartReasoningStart {
		delta, end = wire.PartReasoningDelta, wire.PartReasoningEnd
	}
	for _, p := range []wire.StreamPart{{Type: startType, ID: id}, {Type: delta, ID: id, Delta: text}, {Type: end, ID: id}} {
		if err := t.Send(p); err != nil {
			return err
		}
	}
	return nil
}

// DeclareTools declares the Planner's own tools before it calls them.
func (t *Turn) DeclareTools(names ...string) error {
	return t.Session.link.Send(wire.Tools{Session: t.Session.ID, Turn: t.ID(), Names: names})
}

// ToolResultError is a host tool's error result.
type ToolResultError struct {
	Tool   string
	Output json.RawMessage // { "error": "<message>" } or execution-denied
}

func (e *ToolResultError) Error() string {
	var o struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(e.Output, &o) == nil && o.Error != "" {
		return e.Tool + ": " + o.Error
	}
	return e.Tool + " failed: " + string(e.Output)
}

// CallTool calls one of the turn's host tools and waits for its result. A
// failed call returns a *ToolResultError; an abort or a close ends the wait.
func (t *Turn) CallTool(ctx context.Context, name string, input any) (json.RawMessage, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	return t.CallToolID(ctx, t.newID("call-"), name, string(raw))
}

// CallToolID is CallTool with the caller's own toolCallId and input text.
func (t *Turn) CallToolID(ctx context.Context, toolCallID, name, input string) (json.RawMessage, error) {
	l := t.link
	key := callKey(t.Session.ID, t.ID(), toolCallID)
	ch := make(chan wire.HostToolResult, 1)
	l.mu.Lock()
	l.calls[key] = ch
	l.mu.Unlock()
	if err := l.Send(wire.HostToolCall{Session: t.Session.ID, Turn: t.ID(), ToolCallID: toolCallID, ToolName: name, Input: input}); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, ErrClosed
		}
		if r.IsError {
			return nil, &ToolResultError{Tool: name, Output: r.Output}
		}
		return r.Output, nil
	case <-ctx.Done():
		l.mu.Lock()
		delete(l.calls, key)
		l.mu.Unlock()
		return nil, ctx.Err()
	case <-t.ctx.Done():
		// After abort the server sends no result: settle the call as failed.
		return nil, fmt.Errorf("%s: the turn was stopped", name)
	}
}

// OwnTool reports a call of one of the Planner's own (declared) tools: its
// tool-call part, then run's result as the tool-result part. A run error is
// sent as the structured tool error envelope with isError.
func (t *Turn) OwnTool(name string, input any, run func() (any, error)) error {
	raw, err := json.Marshal(input)
	if err != nil {
		return err
	}
	id := t.newID("own-")
	if err := t.Send(wire.StreamPart{Type: wire.PartToolCall, ToolCallID: id, ToolName: name, Input: string(raw), ProviderExecuted: true}); err != nil {
		return err
	}
	out, runErr := run()
	result := wire.StreamPart{Type: wire.PartToolResult, ToolCallID: id, ToolName: name}
	if runErr != nil {
		te := &wire.ToolError{Code: "tool-failed", Message: cut(runErr.Error())}
		if !errors.As(runErr, &te) {
			te = &wire.ToolError{Code: "tool-failed", Message: cut(runErr.Error())}
		}
		out, result.IsError = map[string]any{"error": te}, true
	}
	if result.Result, err = json.Marshal(out); err != nil {
		return err
	}
	return t.Send(result)
}

// Result is a question's outcome, decoded for its method.
type Result struct {
	Status  string // answered, cancelled, expired or failed
	Answers []wire.QuestionAnswer
	Yes     bool    // confirm
	Choice  *string // select
	Text    *string // input, editor
	Message string  // failed, or why a question was settled locally
	Value   json.RawMessage
}

type ask struct {
	request string
	session string
	settled atomic.Bool
	method  string
	ch      chan Result
	once    sync.Once
}

func (a *ask) settle(m wire.InputResult) {
	r := Result{Status: m.Status, Message: m.Message, Value: m.Value}
	if len(m.Value) > 0 {
		switch a.method {
		case wire.MethodQuestionnaire:
			var v struct {
				Answers []wire.QuestionAnswer `json:"answers"`
			}
			_ = decodeJSON(m.Value, &v)
			r.Answers = v.Answers
		case wire.MethodConfirm:
			_ = decodeJSON(m.Value, &r.Yes)
		case wire.MethodSelect:
			_ = decodeJSON(m.Value, &r.Choice)
		default:
			_ = decodeJSON(m.Value, &r.Text)
		}
	}
	a.once.Do(func() {
		a.settled.Store(true)
		a.ch <- r
	})
}

// AskOptions are the optional fields of an input-request.
type AskOptions struct {
	Request         string // a fresh id; empty picks one
	WorkflowRunID   string
	WorkflowStageID string
	RootRunID       string
	Block           *wire.Block
}

var askSeq atomic.Int64

// Ask asks the document's members one question call and waits for the
// answer. Cancelling ctx withdraws the question with input-cancel.
func (s *Session) Ask(ctx context.Context, in wire.Input, opt AskOptions) (Result, error) {
	l := s.currentLink()
	if opt.Request == "" {
		opt.Request = fmt.Sprintf("q-%d-%s", askSeq.Add(1), s.ID)
		if len(opt.Request) > 128 {
			opt.Request = opt.Request[:128]
		}
	}
	a := &ask{request: opt.Request, session: s.ID, method: in.Method, ch: make(chan Result, 1)}
	l.mu.Lock()
	l.asks[opt.Request] = a
	l.mu.Unlock()
	err := l.Send(wire.InputRequest{Request: opt.Request, Session: s.ID, WorkflowRunID: opt.WorkflowRunID,
		WorkflowStageID: opt.WorkflowStageID, RootRunID: opt.RootRunID, Block: opt.Block, Input: in})
	if err != nil {
		return Result{}, err
	}
	select {
	case r := <-a.ch:
		return r, nil
	case <-ctx.Done():
		// On a link that has dropped the wait ends at once, and the next
		// link's resume leaves the question out, which withdraws it.
		if s.currentLink().Send(wire.InputCancel{Request: opt.Request}) != nil {
			a.settleLocal("The question was withdrawn.")
		}
		return <-a.ch, ctx.Err()
	}
}

// settleAsks settles matching questions with a local cancelled result.
func (l *Link) settleAsks(match func(*ask) bool, message string) {
	l.mu.Lock()
	var hit []*ask
	for id, a := range l.asks {
		if match(a) {
			hit = append(hit, a)
			delete(l.asks, id)
		}
	}
	l.mu.Unlock()
	for _, a := range hit {
		a.settleLocal(message)
	}
}
