package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Resuming after a dropped link (resumable-sessions) and the rule for a
// server that restarts (restart-notice): spec "Resuming after a dropped
// link" and "When the server is restarting".
//
// A link granted resumable-sessions that drops without a detach, a refusal
// or a protocol error keeps each session that still waits on a question or
// reported a live or paused run; its turn under way is lost, as on any
// close. Link.Resumption returns what it kept; pass it as Config.Resume to
// the next Dial, which sends resume first, waits for resumed and gives back
// the sessions the server kept (the others are destroyed and their
// questions settled cancelled). The input-results and stops the server held
// then arrive as usual; every input-result is acknowledged with
// input-received. Connecting again is left to the caller: RetryDelay says
// how soon.

// RestartRetryInterval is how often a resume is tried again inside a
// restarting server's announced window.
const RestartRetryInterval = 250 * time.Millisecond

// Resumption is what a dropped link kept for the next one: its sessions and
// the questions they wait on.
type Resumption struct {
	mu       sync.Mutex
	sessions []*Session
	asks     map[string]*ask // by request id
	// RestartUntil is when a restarting server's window ends (restart-notice):
	// zero unless the link closed with 1012.
	RestartUntil time.Time
	used         bool
}

// Sessions are the ids of the sessions kept.
func (r *Resumption) Sessions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, len(r.sessions))
	for i, s := range r.sessions {
		ids[i] = s.ID
	}
	return ids
}

// message is the resume to send: every kept session with the questions it
// still waits on. A question its asker withdrew meanwhile is left out,
// which withdraws it in Chopin.
func (r *Resumption) message() wire.ResumeSessions {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := wire.ResumeSessions{Sessions: []wire.ResumedSession{}}
	for _, s := range r.sessions {
		rs := wire.ResumedSession{Session: s.ID, Requests: []string{}}
		for id, a := range r.asks {
			if a.session == s.ID && !a.isSettled() {
				rs.Requests = append(rs.Requests, id)
			}
		}
		m.Sessions = append(m.Sessions, rs)
	}
	return m
}

// Abandon ends everything r kept: its questions are settled cancelled with
// message and each session's Destroyed handler is called. It is for a
// refusal or error that makes a resume final.
func (r *Resumption) Abandon(h Handler, message string) {
	r.mu.Lock()
	sessions, asks := r.sessions, r.asks
	r.sessions, r.asks, r.used = nil, nil, true
	r.mu.Unlock()
	for _, a := range asks {
		a.settleLocal(message)
	}
	if h.Destroyed != nil {
		for _, s := range sessions {
			go h.Destroyed(s)
		}
	}
}

// Resumption is what the link kept when it dropped: nil while it is
// attached, after a detach, a refusal or a protocol error, or when the
// server did not grant resumable-sessions.
func (l *Link) Resumption() *Resumption {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept
}

// RetryDelay is how long to wait before attaching again after the link
// ended (or after a failed attempt to resume r): at once after a close with
// 1012, RestartRetryInterval inside the window restarting announced, and
// otherwise fallback, the caller's own backoff.
func RetryDelay(r *Resumption, justClosed bool, code int, fallback time.Duration) time.Duration {
	if justClosed && code == websocket.CloseServiceRestart {
		return 0
	}
	if r != nil && time.Now().Before(r.RestartUntil) {
		return RestartRetryInterval
	}
	return fallback
}

// Backoff is a Planner's wait before attaching again after failures
// failed attempts in a row: 1 s after the first, doubling to at most 30 s.
func Backoff(failures int) time.Duration {
	d := time.Second
	for i := 1; i < failures && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

// Sleep waits d, or less if ctx ends first; it reports whether ctx is still
// live.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// resumable reports whether the server granted resumable-sessions.
func (l *Link) resumable() bool { return l.Has(wire.FeatureResumableSessions) }

// keep decides, as the link closes, what the next link resumes; the caller
// holds l.mu. It returns the request ids of the questions kept.
func (l *Link) keep(ce *CloseError, sessions map[string]*Session) (kept map[string]bool) {
	kept = map[string]bool{}
	final := !l.resumable() || l.detached || ce.Refused != nil || ce.Protocol != nil || ce.Code == websocket.CloseNormalClosure
	if final {
		return kept
	}
	r := &Resumption{asks: map[string]*ask{}}
	if ce.Code == websocket.CloseServiceRestart && l.restartWithin > 0 {
		r.RestartUntil = time.Now().Add(l.restartWithin)
	}
	for id, s := range sessions {
		hold := s.hasLiveRuns()
		for req, a := range l.asks {
			if a.session == id && !a.isSettled() {
				r.asks[req] = a
				kept[req], hold = true, true
			}
		}
		if hold {
			r.sessions = append(r.sessions, s)
		}
	}
	for req := range kept {
		delete(l.asks, req)
	}
	l.kept = r
	return kept
}

// resume sends r as the first message after attached and waits for
// resumed. It gives the link the sessions and questions the server kept and
// ends the others. A refused is returned as a *Refusal and leaves r as it
// was, so the same resume can be sent again.
func (l *Link) resume(ctx context.Context, r *Resumption) error {
	if !l.resumable() {
		r.Abandon(l.cfg.Handler, "The connection closed before the question was answered.")
		return nil
	}
	r.mu.Lock()
	used := r.used
	r.mu.Unlock()
	if used {
		return errors.New("client: this resumption was used already")
	}
	if err := l.Send(r.message()); err != nil {
		return err
	}
	// The server may hold the resume inside a restart window: wait for it
	// as long as ctx allows.
	stop := context.AfterFunc(ctx, func() { _ = l.conn.Close() })
	defer stop()
	m, err := l.readMessage()
	if err != nil {
		return fmt.Errorf("client: waiting for resumed: %w", err)
	}
	var resumed wire.Resumed
	switch m := m.(type) {
	case wire.Resumed:
		resumed = m
	case wire.Refused:
		code := 0
		if _, _, err := l.conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				code = ce.Code
			}
		}
		return &Refusal{Refused: m, CloseCode: code}
	case wire.ProtocolError:
		return fmt.Errorf("client: resume: %s: %s", m.Code, m.Message)
	default:
		return fmt.Errorf("client: the server answered resume with %s", m.MessageType())
	}
	back := map[string]map[string]bool{}
	for _, s := range resumed.Sessions {
		reqs := map[string]bool{}
		for _, q := range s.Requests {
			reqs[q] = true
		}
		back[s.Session] = reqs
	}
	r.mu.Lock()
	sessions, asks := r.sessions, r.asks
	r.sessions, r.asks, r.used = nil, nil, true
	r.mu.Unlock()
	var gone []*Session
	l.mu.Lock()
	for _, s := range sessions {
		if _, ok := back[s.ID]; !ok {
			gone = append(gone, s)
			continue
		}
		s.mu.Lock()
		s.link = l
		s.mu.Unlock()
		l.sessions[s.ID] = s
	}
	var dropped []*ask
	for req, a := range asks {
		if back[a.session][req] {
			l.asks[req] = a
		} else {
			dropped = append(dropped, a)
		}
	}
	l.mu.Unlock()
	for _, a := range dropped {
		a.settleLocal("Chopin no longer holds the question.")
	}
	if h := l.cfg.Handler.Destroyed; h != nil {
		for _, s := range gone {
			go h(s)
		}
	}
	return nil
}

// acknowledge answers an input-result with input-received when the link
// resumes: every one, a repeated one included.
func (l *Link) acknowledge(request string) {
	if l.resumable() {
		_ = l.Send(wire.InputReceived{Request: request})
	}
}

// settleLocal settles a question without an input-result.
func (a *ask) settleLocal(message string) {
	a.once.Do(func() {
		a.settled.Store(true)
		a.ch <- Result{Status: wire.AnswerCancelled, Message: message}
	})
}

func (a *ask) isSettled() bool { return a.settled.Load() }

// hasLiveRuns reports whether the session's last runs report listed a live
// or paused run.
func (s *Session) hasLiveRuns() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// currentLink is the link the session is on now: a resumed session moves to
// the new link.
func (s *Session) currentLink() *Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.link
}
