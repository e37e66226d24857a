package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Config says where to attach and how to act.
type Config struct {
	URL      string // the agent endpoint, ws(s):// or http(s)://.../api/v1/agent
	Token    string // the agent token, sent as the bearer; never logged
	Document string // a document id or its Chopin URL
	// Features are asked for in Chopin-Agent-Features; nil sends no header.
	Features []string
	Checkout *wire.Checkout
	// Header is added to the upgrade request (a client sends no Origin).
	Header  http.Header
	Handler Handler
	Logger  *slog.Logger
	// Resume is what a dropped link kept (Link.Resumption): Dial sends it
	// as resume right after attached and waits for resumed
	// (resumable-sessions). nil resumes nothing.
	Resume *Resumption
}

// Handler is the Planner. Every field is optional.
type Handler struct {
	// Start answers start: nil starts the session, an error refuses it
	// with its text.
	Start func(s *Session) error
	// Turn runs one turn in its own goroutine. ctx ends when the server
	// aborts the turn, destroys its session or the link closes. Returning
	// nil ends the turn finished (aborted after an abort); an error ends it
	// failed with the error's text.
	Turn func(ctx context.Context, t *Turn) error
	// Stop and Resume answer Stop Planner and Resume Planner for the
	// session's runs (run is empty for all of them). The default is ok.
	Stop   func(s *Session, run string) (ok bool, message string)
	Resume func(s *Session, run string) (ok bool, message string)
	// Destroyed is told that a session ended.
	Destroyed func(s *Session)
	// Steer (steer-turn) takes a person's message for the running turn t.
	// Without it every steer is refused.
	Steer func(t *Turn, prompt string) (ok bool, message string)
	// Fork (session-forks) answers fork: nil starts the session s branched
	// from from, an error refuses it with its text, and the server falls
	// back to start. Without it every fork is refused (fork.go).
	Fork func(s *Session, from wire.ForkFrom) error
}

// HTTPError is the server refusing the upgrade over HTTP.
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("agent connection refused: HTTP %d: %s", e.Status, strings.TrimSpace(e.Body))
}

// Refusal is a refused message: the attach was refused or the link revoked.
type Refusal struct {
	wire.Refused
	CloseCode int
}

func (e *Refusal) Error() string {
	return fmt.Sprintf("refused %s (%d): %s", e.Code, e.CloseCode, e.Message)
}

// CloseError says how the link ended.
type CloseError struct {
	Code     int    // the close code, or 1006 when the socket dropped
	Reason   string // the close reason
	Refused  *wire.Refused
	Protocol *wire.ProtocolError // the error message before a 1008 or 1009
}

func (e *CloseError) Error() string {
	switch {
	case e.Refused != nil:
		return fmt.Sprintf("link closed %d: refused %s: %s", e.Code, e.Refused.Code, e.Refused.Message)
	case e.Protocol != nil:
		return fmt.Sprintf("link closed %d: %s: %s", e.Code, e.Protocol.Code, e.Protocol.Message)
	}
	return fmt.Sprintf("link closed %d %s", e.Code, e.Reason)
}

// ErrClosed is returned by calls made on a link that has closed.
var ErrClosed = errors.New("client: the link is closed")

// Link is one attached agent connection.
type Link struct {
	cfg      Config
	conn     *websocket.Conn
	log      *slog.Logger
	attached wire.Attached
	done     chan struct{}

	writeMu sync.Mutex // gorilla allows one writer

	mu       sync.Mutex
	err      *CloseError
	refused  *wire.Refused
	protoErr *wire.ProtocolError
	sessions map[string]*Session
	calls    map[string]chan wire.HostToolResult // by session/turn/toolCallId
	asks     map[string]*ask
	// resumable-sessions and restart-notice (resume.go)
	detached      bool
	restartWithin time.Duration
	kept          *Resumption
}

// Dial connects, attaches and starts serving cfg.Handler. The error is an
// *HTTPError when the upgrade is refused and a *Refusal when the attach is.
func Dial(ctx context.Context, cfg Config) (*Link, error) {
	u := cfg.URL
	if rest, ok := strings.CutPrefix(u, "http"); ok {
		u = "ws" + rest
	}
	h := http.Header{}
	for k, v := range cfg.Header {
		h[k] = v
	}
	h.Set("Authorization", "Bearer "+cfg.Token)
	if cfg.Features != nil {
		h.Set(wire.FeaturesHeader, strings.Join(cfg.Features, ", "))
	}
	d := websocket.Dialer{Subprotocols: []string{wire.Subprotocol}, HandshakeTimeout: 30 * time.Second}
	conn, resp, err := d.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			return nil, &HTTPError{Status: resp.StatusCode, Body: string(body)}
		}
		return nil, fmt.Errorf("client: dial: %w", err)
	}
	if conn.Subprotocol() != wire.Subprotocol {
		_ = conn.Close()
		return nil, fmt.Errorf("client: the server answered subprotocol %q", conn.Subprotocol())
	}
	l := &Link{cfg: cfg, conn: conn, log: cfg.Logger, done: make(chan struct{}),
		sessions: map[string]*Session{}, calls: map[string]chan wire.HostToolResult{}, asks: map[string]*ask{}}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if err := l.Send(wire.Attach{Version: wire.ProtocolVersion, Document: cfg.Document, Checkout: cfg.Checkout}); err != nil {
		_ = conn.Close()
		return nil, err
	}
	// The first answer is attached or refused; nothing else may come before.
	first, err := l.readMessage()
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("client: waiting for attached: %w", err)
	}
	switch m := first.(type) {
	case wire.Attached:
		l.attached = m
	case wire.Refused:
		code := 0
		if _, _, err := conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				code = ce.Code
			}
		}
		_ = conn.Close()
		return nil, &Refusal{Refused: m, CloseCode: code}
	default:
		_ = conn.Close()
		return nil, fmt.Errorf("client: the server answered attach with %s", first.MessageType())
	}
	if cfg.Resume != nil {
		if err := l.resume(ctx, cfg.Resume); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	go l.read()
	return l, nil
}

// Attached is the server's attached message.
func (l *Link) Attached() wire.Attached { return l.attached }

// Has reports whether the server granted feature.
func (l *Link) Has(feature string) bool {
	for _, f := range l.attached.Features {
		if f == feature {
			return true
		}
	}
	return false
}

// Done is closed when the link has ended.
func (l *Link) Done() <-chan struct{} { return l.done }

// Err says how the link ended, once Done is closed.
func (l *Link) Err() *CloseError {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Detach ends the link (close 1000) and waits for it to close.
func (l *Link) Detach(ctx context.Context) error {
	l.mu.Lock()
	l.detached = true
	l.mu.Unlock()
	if err := l.Send(wire.Detach{}); err != nil {
		return err
	}
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		_ = l.conn.Close()
		return ctx.Err()
	}
}

// Close drops the socket without detaching, as a network failure would.
func (l *Link) Close() error { return l.conn.Close() }

// Send sends one message.
func (l *Link) Send(m wire.Message) error {
	frame, err := wire.Encode(m)
	if err != nil {
		return err
	}
	return l.SendRaw(frame)
}

// SendRaw sends one text frame as it is. It is for tests of the server's
// refusals; a Planner uses Send.
func (l *Link) SendRaw(frame []byte) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	select {
	case <-l.done:
		return ErrClosed
	default:
	}
	if err := l.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

func (l *Link) readMessage() (wire.Message, error) {
	kind, data, err := l.conn.ReadMessage()
	if err != nil {
		return nil, err
	}
	if kind != websocket.TextMessage {
		return nil, errors.New("a binary frame")
	}
	return wire.DecodeServerFrame(data)
}

// read dispatches the server's messages until the link closes.
func (l *Link) read() {
	for {
		kind, data, err := l.conn.ReadMessage()
		if err != nil {
			l.finish(err)
			return
		}
		m, err := wire.DecodeServerFrame(data)
		if kind != websocket.TextMessage || err != nil {
			// The spec's answer to a frame the client cannot parse.
			l.log.Warn("malformed frame from the server", "err", err)
			l.writeMu.Lock()
			_ = l.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4400, "malformed-message"), time.Now().Add(time.Second))
			l.writeMu.Unlock()
			_ = l.conn.Close()
			continue
		}
		l.dispatch(m)
	}
}

func (l *Link) dispatch(m wire.Message) {
	switch m := m.(type) {
	case wire.Start:
		l.start(m)
	case wire.Turn:
		l.turn(m)
	case wire.Abort:
		if t := l.currentTurn(m.Session, m.Turn); t != nil {
			t.abort()
		}
	case wire.HostToolResult:
		l.mu.Lock()
		ch := l.calls[callKey(m.Session, m.Turn, m.ToolCallID)]
		delete(l.calls, callKey(m.Session, m.Turn, m.ToolCallID))
		l.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case wire.InputResult:
		l.mu.Lock()
		a := l.asks[m.Request]
		delete(l.asks, m.Request)
		l.mu.Unlock()
		// Acknowledged first, so that whatever the asker sends once it has
		// its answer follows the acknowledgement on the wire.
		l.acknowledge(m.Request)
		if a != nil {
			a.settle(m)
		}
	case wire.Restarting:
		l.mu.Lock()
		l.restartWithin = time.Duration(m.ReconnectWithinMs) * time.Millisecond
		l.mu.Unlock()
	case wire.Stop:
		l.control(m.Request, m.Session, m.Run, l.cfg.Handler.Stop)
	case wire.Resume:
		l.control(m.Request, m.Session, m.Run, l.cfg.Handler.Resume)
	case wire.Destroy:
		l.destroy(m.Session)
	case wire.Steer:
		l.steer(m)
	case wire.Fork:
		l.fork(m)
	case wire.Refused:
		l.mu.Lock()
		l.refused = &m
		l.mu.Unlock()
	case wire.ProtocolError:
		l.mu.Lock()
		l.protoErr = &m
		l.mu.Unlock()
	}
}

func (l *Link) start(m wire.Start) {
	s := &Session{ID: m.Session, Mode: m.Mode, link: l, turns: map[string]*Turn{}}
	l.mu.Lock()
	l.sessions[s.ID] = s
	l.mu.Unlock()
	go func() {
		var err error
		if h := l.cfg.Handler.Start; h != nil {
			err = h(s)
		}
		if err != nil {
			l.forget(s.ID)
			_ = l.Send(wire.StartFailed{Session: s.ID, Message: cut(err.Error())})
			return
		}
		_ = l.Send(wire.Started{Session: s.ID})
	}()
}

func (l *Link) control(request, session, run string, h func(*Session, string) (bool, string)) {
	s := l.session(session)
	go func() {
		ok, msg := true, ""
		if h != nil && s != nil {
			ok, msg = h(s, run)
		}
		_ = l.Send(wire.ControlResult{Request: request, OK: ok, Message: cut(msg)})
	}()
}

func (l *Link) destroy(session string) {
	s := l.forget(session)
	if s == nil {
		return
	}
	s.mu.Lock()
	for _, t := range s.turns {
		t.cancel()
	}
	s.mu.Unlock()
	l.settleAsks(func(a *ask) bool { return a.session == session }, "The session was destroyed.")
	if h := l.cfg.Handler.Destroyed; h != nil {
		go h(s)
	}
}

func (l *Link) session(id string) *Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sessions[id]
}

func (l *Link) forget(id string) *Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sessions[id]
	delete(l.sessions, id)
	return s
}

// finish settles everything still waiting once the socket is gone.
func (l *Link) finish(err error) {
	ce := &CloseError{Code: websocket.CloseAbnormalClosure}
	var wce *websocket.CloseError
	if errors.As(err, &wce) {
		ce.Code, ce.Reason = wce.Code, wce.Text
	}
	l.mu.Lock()
	ce.Refused, ce.Protocol = l.refused, l.protoErr
	l.err = ce
	kept := l.keep(ce, l.sessions)
	all := l.sessions
	l.sessions = map[string]*Session{}
	calls := l.calls
	l.calls = map[string]chan wire.HostToolResult{}
	l.mu.Unlock()
	close(l.done)
	_ = l.conn.Close()
	for _, ch := range calls {
		close(ch)
	}
	for _, s := range all { // a turn under way is lost even when its session is kept
		s.mu.Lock()
		for _, t := range s.turns {
			t.cancel()
		}
		s.mu.Unlock()
	}
	l.settleAsks(func(a *ask) bool { return !kept[a.request] }, "The connection closed before the question was answered.")
}

func callKey(session, turn, id string) string { return session + "\x00" + turn + "\x00" + id }

// cut shortens text to the 4,000 characters a message may hold.
func cut(s string) string {
	n := 0
	for i := range s {
		if n == 4000 {
			return s[:i]
		}
		n++
	}
	return s
}

// decodeJSON is a helper for results: it reads raw into v.
func decodeJSON(raw json.RawMessage, v any) error { return json.Unmarshal(raw, v) }
