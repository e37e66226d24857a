package agentconn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

type linkState int

const (
	stateAttaching linkState = iota // waiting for attach, or checking it
	stateAttached
	stateClosed
)

// link is one agent connection, from upgrade to close. Its reader goroutine
// handles the client's messages in order; the writer owns the socket's data
// frames; watch enforces liveness. Everything mutable is guarded by mu, and
// nothing calls the Host while holding mu: effects that reach the Host are
// collected under the lock and run after it.
type link struct {
	srv      *Server
	id       string
	conn     *websocket.Conn
	w        *writer
	log      *slog.Logger
	account  Account
	bearer   [32]byte // SHA-256 of the bearer, to close links of a revoked token
	features []string // granted; nil when the client sent no features header

	ctx    context.Context // ends when the link closes: host tools stop
	cancel context.CancelFunc
	stop   chan struct{} // closed when serve returns

	lastHeard atomic.Int64 // UnixNano of the last frame heard, pongs included

	mu           sync.Mutex
	attachTimer  *time.Timer // until the first message; nil once it came or the wait ran out
	recheckTimer *time.Timer
	state        linkState
	doc          Document
	since        time.Time
	sessions     map[string]*session
	questions    map[string]*Question // open input-requests by request id
	seen         requestMemory
	controls     map[string]chan wire.ControlResult
	rs           resumable            // resumable-sessions: what a drop keeps (hold.go, resume.go)
	catalog      *wire.Catalog        // capability-catalog: the last report; nil before one
	forks        map[string]forkPoint // session-forks: each thread's fork point (fork.go)
	hostCalls    int                  // host tool calls running, at most maxHostCallsAtOnce
	ending       int                  // turns ended whose sink has not yet taken End: still busy
	endsTaken    chan struct{}        // closed when ending is back to 0
}

func newLink(s *Server, conn *websocket.Conn, account Account, bearer [32]byte, features []string) *link {
	id := s.newLinkID()
	ctx, cancel := context.WithCancel(context.Background())
	l := &link{
		srv: s, id: id, conn: conn, account: account, bearer: bearer, features: features,
		w:         newWriter(conn, s.opts.Ping, s.maxQueue),
		log:       s.log.With("link", id),
		ctx:       ctx,
		cancel:    cancel,
		stop:      make(chan struct{}),
		sessions:  map[string]*session{},
		questions: map[string]*Question{},
		seen:      newRequestMemory(rememberedRequests),
		controls:  map[string]chan wire.ControlResult{},
	}
	now := time.Now().UnixNano()
	l.lastHeard.Store(now)
	l.w.lastDrain.Store(now)
	return l
}

func (l *link) has(feature string) bool {
	for _, f := range l.features {
		if f == feature {
			return true
		}
	}
	return false
}

// serve runs the link until its socket is gone.
func (l *link) serve() {
	defer l.srv.removeLink(l)
	defer close(l.stop)
	heard := func(string) error { l.lastHeard.Store(time.Now().UnixNano()); return nil }
	l.conn.SetPongHandler(heard)
	ping := l.conn.PingHandler()
	l.conn.SetPingHandler(func(data string) error { _ = heard(data); return ping(data) })

	l.mu.Lock()
	l.attachTimer = time.AfterFunc(l.srv.opts.Timeout, l.attachTimedOut)
	l.mu.Unlock()
	go l.w.run(l.stop)
	go l.watch()
	// Once the writer has sent the close frame, give the client a moment to
	// answer it, then drop the socket so the reader returns.
	go func() {
		select {
		case <-l.w.done:
			select {
			case <-time.After(closeLinger):
			case <-l.stop:
			}
		case <-l.stop:
		}
		_ = l.conn.Close()
	}()
	l.read()
	l.close(closing{dropped: true, turnMessage: wire.MsgLinkClosed})
	_ = l.conn.Close()
}

// closeLinger is how long the server waits for the client's close frame.
const closeLinger = 2 * time.Second

// readBufferKept is the most a link keeps of its read buffer between frames:
// enough for the frames a turn streams, while one a large frame grew is let go,
// so an idle link holds little.
const readBufferKept = 16 << 10

// read handles the client's frames in order until the socket fails.
func (l *link) read() {
	// One buffer serves every frame: the decoder copies what it keeps.
	var buf bytes.Buffer
	var frame io.LimitedReader
	for {
		kind, r, err := l.conn.NextReader()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				l.log.Debug("client closed", "code", ce.Code)
			}
			return
		}
		if l.closed() {
			continue // draining until the client answers our close
		}
		if kind == websocket.BinaryMessage {
			l.protocolError(wire.CodeMalformed, wire.MsgBinary)
			continue
		}
		// Read one byte past the limit to tell a frame over it, without
		// buffering the rest of an oversized frame.
		if buf.Cap() > readBufferKept {
			buf = bytes.Buffer{}
		}
		buf.Reset()
		frame = io.LimitedReader{R: r, N: wire.MaxFrameBytes + 1}
		if _, err := buf.ReadFrom(&frame); err != nil {
			return
		}
		l.lastHeard.Store(time.Now().UnixNano())
		if buf.Len() > wire.MaxFrameBytes {
			l.protocolError(wire.CodeTooLarge, wire.MsgTooLarge)
			continue
		}
		msg, err := wire.DecodeGrantedClientFrame(buf.Bytes(), l.has)
		var unoffered *wire.UnofferedError
		switch {
		case errors.As(err, &unoffered):
			l.protocolError(wire.CodeProtocol, wire.MsgUnoffered(unoffered.Type))
			continue
		case err != nil:
			l.protocolError(wire.CodeMalformed, wire.MsgMalformed(err.Error()))
			continue
		}
		l.handle(msg)
	}
}

// attachTimedOut closes a socket that opened but sent no first message
// within the connection timeout. Pongs alone keep a link alive ("Pings"), so
// without this a client that answers pings and never attaches would hold a
// connection for ever. The spec's own bound on hearing nothing from a client
// is the timeout (AGENT_CONNECTION_TIMEOUT_MS), and it closes such a client
// as unresponsive: 1001 with no error message before it, as here. Nothing was
// out of order (1008 with protocol); the client just never spoke.
func (l *link) attachTimedOut() {
	l.mu.Lock()
	waiting := l.attachTimer != nil && l.state == stateAttaching
	l.attachTimer = nil // a first message that comes now is too late
	l.mu.Unlock()
	if waiting {
		l.log.Info("no attach within the timeout")
		l.close(closing{code: wire.CloseUnresponsive, reason: "unresponsive", turnMessage: wire.MsgLinkClosed})
	}
}

// handle dispatches one decoded message.
func (l *link) handle(msg wire.Message) {
	l.mu.Lock()
	state := l.state
	if state == stateAttaching {
		if l.attachTimer == nil { // the wait ran out: the link is closing
			l.mu.Unlock()
			return
		}
		l.attachTimer.Stop()
		l.attachTimer = nil
	}
	l.mu.Unlock()
	if state == stateAttaching {
		if m, ok := msg.(wire.Attach); ok {
			l.attach(l.ctx, m)
		} else {
			l.protocolError(wire.CodeProtocol, wire.MsgAttachFirst)
		}
		return
	}
	if l.firstAfterAttached(msg) {
		return
	}
	switch m := msg.(type) {
	case wire.Attach:
		l.protocolError(wire.CodeProtocol, wire.MsgSecondAttach)
	case wire.Detach:
		l.log.Info("planner detached")
		l.close(closing{code: wire.CloseDetached, reason: "detached", turnMessage: wire.MsgLinkClosed})
	case wire.Started:
		l.started(m)
	case wire.StartFailed:
		l.startFailed(m)
	case wire.Tools:
		l.declareTools(m)
	case wire.Part:
		l.part(m)
	case wire.HostToolCall:
		l.hostToolCall(m)
	case wire.TurnEnd:
		l.turnEnd(m)
	case wire.InputRequest:
		l.inputRequest(m)
	case wire.InputCancel:
		l.inputCancel(m)
	case wire.Runs:
		l.runs(m)
	case wire.ControlResult:
		l.controlResult(m)
	case wire.Capabilities:
		l.capabilities(m)
	}
}

// closing says how a link ends.
type closing struct {
	code        int
	reason      string
	msg         wire.Message // refused or error, sent before the close
	release     bool         // the ownership ends without a grace period
	abrupt      bool         // unresponsive: do not wait for the queue
	dropped     bool         // the socket is gone: nothing can be sent
	turnMessage string       // what a running turn fails with
}

func (l *link) closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state == stateClosed
}

// close ends the link once: the running turn fails, host tools stop, open
// questions are withdrawn, live runs show as stopped, and the ownership
// enters its grace period or ends.
func (l *link) close(c closing) {
	l.mu.Lock()
	if l.state == stateClosed {
		l.mu.Unlock()
		return
	}
	wasAttached := l.state == stateAttached
	l.state = stateClosed
	var fx effects
	parked := l.closeSessionsLocked(c, wasAttached, &fx)
	for _, ch := range l.controls {
		close(ch)
	}
	l.controls = map[string]chan wire.ControlResult{}
	doc, recheck, attach := l.doc, l.recheckTimer, l.attachTimer
	l.mu.Unlock()

	for _, t := range []*time.Timer{recheck, attach} {
		if t != nil {
			t.Stop()
		}
	}
	l.cancel()
	// The ownership settles before the client can see the close, so a
	// client that reattaches at once finds the grace period, not itself.
	if doc.ID != "" {
		l.srv.linkClosed(l, parked, c.release)
	}
	switch {
	case c.dropped:
	case c.abrupt:
		l.w.abort(c.code, c.reason)
	default:
		if c.msg != nil {
			if frame, err := wire.Encode(c.msg); err == nil {
				_ = l.w.send(frame)
			}
		}
		l.w.close(c.code, c.reason)
	}
	if c.dropped {
		l.log.Info("link dropped")
	} else {
		l.log.Info("link closed", "code", c.code, "reason", c.reason)
	}
	fx.run(l)
}

// protocolError sends error and closes: 1009 for message-too-large, else 1008.
func (l *link) protocolError(code, message string) {
	closeCode := wire.ClosePolicy
	if code == wire.CodeTooLarge {
		closeCode = wire.CloseTooLarge
	}
	l.log.Info("protocol error", "code", code, "err", message)
	l.close(closing{code: closeCode, reason: code, msg: wire.ProtocolError{Code: code, Message: message}, turnMessage: wire.MsgLinkClosed})
}

// revoke refuses the attached link with access-revoked (4403); its
// ownership ends without a grace period.
func (l *link) revoke(message string) {
	l.close(closing{code: wire.CloseForbidden, reason: wire.CodeAccessRevoked, release: true,
		msg: wire.Refused{Code: wire.CodeAccessRevoked, Message: message}, turnMessage: wire.MsgAccessRevoked})
}

// send queues m; the caller holds mu. A client too far behind to take it is
// unresponsive.
func (l *link) send(m wire.Message) {
	if l.state == stateClosed {
		return
	}
	frame, err := wire.Encode(m)
	if err != nil {
		l.log.Error("encode failed", "type", m.MessageType(), "err", err)
		return
	}
	if err := l.w.send(frame); errors.Is(err, errQueueFull) {
		l.log.Warn("send queue full, closing", "queued", l.w.pending())
		go l.close(closing{code: wire.CloseUnresponsive, reason: "unresponsive", abrupt: true, turnMessage: wire.MsgLinkClosed})
	}
}

// watch closes the link as unresponsive after Timeout without hearing from
// the client (a queue that drains postpones it) or MaxSilence in any case.
func (l *link) watch() {
	o := l.srv.opts
	every := min(o.Timeout, o.MaxSilence) / 8
	every = max(min(every, time.Second), time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		now := time.Now().UnixNano()
		heard := l.lastHeard.Load()
		progress := max(heard, l.w.lastDrain.Load())
		if now-heard > int64(o.MaxSilence) || now-progress > int64(o.Timeout) {
			if l.closed() {
				// It would not even take our close. Leave the close frame
				// (abort's included) the time a client has to answer one,
				// then drop the socket: closing it at once can cut that
				// frame off, and the client sees 1006 instead of the code.
				select {
				case <-time.After(closeLinger):
				case <-l.stop:
				}
				_ = l.conn.Close()
				return
			}
			l.log.Info("client unresponsive", "silent", time.Duration(now-heard))
			l.close(closing{code: wire.CloseUnresponsive, reason: "unresponsive", abrupt: true, turnMessage: wire.MsgLinkClosed})
		}
	}
}

// recheck checks the account's access to the document again; on a loss it
// closes the link with access-revoked and reports false. A check that cannot
// decide leaves the link open.
func (l *link) recheck(ctx context.Context) bool {
	l.mu.Lock()
	id, state := l.doc.ID, l.state
	l.mu.Unlock()
	if state != stateAttached {
		return false
	}
	doc, err := l.srv.host.Document(ctx, id)
	switch {
	case errors.Is(err, ErrDocumentNotFound):
		l.revoke(wire.MsgDeleted(l.account.Login))
		return false
	case err != nil:
		l.log.Warn("recheck: document check failed", "err", err)
		return true
	case doc.Archived:
		l.revoke(wire.MsgArchived(l.account.Login))
		return false
	}
	switch err := l.srv.host.Access(ctx, l.account, doc); {
	case errors.Is(err, ErrForbidden):
		l.revoke(wire.MsgAccessLost(l.account.Login, doc.Repository))
		return false
	case err != nil:
		l.log.Warn("recheck: access check failed", "err", err)
	}
	return !l.closed()
}

func (l *link) periodicRecheck() {
	if l.recheck(l.ctx) {
		l.mu.Lock()
		l.recheckTimer.Reset(l.srv.opts.Recheck)
		l.mu.Unlock()
	}
}

// status is the attached link's PlannerStatus.
func (l *link) status() PlannerStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := PlannerStatus{State: l.plannerStateLocked(), Login: l.account.Login, Features: l.features, Since: l.since}
	for _, s := range l.sessions {
		for _, id := range s.runOrder {
			st.Runs = append(st.Runs, *s.cards[id])
		}
	}
	return st
}

// newID returns a fresh id for a session, turn or control request. They are
// random so that ids from different links never meet in logs or Decisions.
func newID(prefix string) string { return prefix + uuid.NewString() }

// effects are calls to the Host collected under mu and made after it.
type effects []func()

func (fx *effects) add(f func()) { *fx = append(*fx, f) }

func (fx effects) run(*link) {
	for _, f := range fx {
		f()
	}
}
