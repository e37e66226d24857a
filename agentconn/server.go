package agentconn

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Options configure a Server. Zero durations take the spec's defaults, except
// Grace: zero is a valid grace period (PLANNER_ATTACH_GRACE_MS=0), so the
// application always passes the configured value.
type Options struct {
	Host   Host
	Logger *slog.Logger

	// Disabled makes every request answer 404 (AGENT=off).
	Disabled bool
	// Origin is APP_ORIGIN. An upgrade that sends Origin must send exactly
	// this; when empty, Origin must name the request's own host.
	Origin string

	Ping       time.Duration // AGENT_CONNECTION_PING_MS
	Timeout    time.Duration // AGENT_CONNECTION_TIMEOUT_MS
	MaxSilence time.Duration // AGENT_CONNECTION_MAX_SILENCE_MS
	Grace      time.Duration // PLANNER_ATTACH_GRACE_MS
	// Recheck is how often an attached link's access is checked again.
	Recheck time.Duration
	// AnswerTimeout is how long start, abort, stop and resume wait for the
	// client (10 s in the spec).
	AnswerTimeout time.Duration
	// Holds stores what resumable links keep, so a restart carries it over
	// (restart.go); nil keeps it in memory only.
	Holds HoldStore
	// HandoverWindow is HANDOVER_PLANNER_WINDOW_MS: how long after a restart
	// a rebuilt hold shows its Planner attached while its client comes back.
	HandoverWindow time.Duration

	// Clock gives the time for what people read (grace deadlines, run
	// cards shown stopped). Liveness uses the monotonic clock.
	Clock func() time.Time
}

// writeBuffers are the links' write buffers, shared by every Server.
var writeBuffers sync.Pool

// Server serves GET /api/v1/agent and tracks each document's Planner.
type Server struct {
	opts     Options
	host     Host
	log      *slog.Logger
	upgrader websocket.Upgrader
	maxQueue int // maxQueueBytes; tests lower it

	nextLink atomic.Int64
	wg       sync.WaitGroup

	mu     sync.Mutex
	closed bool
	owners map[string]*ownership // by document id
	links  map[*link]struct{}
}

// ownership is a document's Planner owner: attached through link, or within
// its grace period (link nil) until until.
type ownership struct {
	login string
	link  *link
	until time.Time
	timer *time.Timer
	ended bool // reset, archived or deleted: no grace period
}

// New returns a Server. Options.Host is required.
func New(opts Options) *Server {
	if opts.Host == nil {
		panic("agentconn: Options.Host is required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.Ping, wire.DefaultPing)
	def(&opts.Timeout, wire.DefaultTimeout)
	def(&opts.MaxSilence, wire.DefaultMaxSilence)
	def(&opts.Recheck, wire.DefaultRecheck)
	def(&opts.AnswerTimeout, wire.DefaultAnswerTimeout)
	opts.Grace = max(opts.Grace, 0)
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		opts:     opts,
		host:     opts.Host,
		log:      opts.Logger,
		maxQueue: maxQueueBytes,
		owners:   map[string]*ownership{},
		links:    map[*link]struct{}{},
	}
	s.upgrader = websocket.Upgrader{
		Subprotocols: []string{wire.Subprotocol},
		// A link holds a write buffer only while it writes: most links are
		// idle most of the time.
		WriteBufferPool: &writeBuffers,
		// ServeHTTP has checked Origin already, by the spec's rule.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	return s
}

// Status returns the document's Planner as the UI shows it.
func (s *Server) Status(documentID string) PlannerStatus {
	s.mu.Lock()
	o := s.owners[documentID]
	var st PlannerStatus
	var l *link
	switch {
	case o == nil:
		st = PlannerStatus{State: PlannerNone}
	case o.link == nil:
		st = PlannerStatus{State: PlannerGrace, Login: o.login, Until: o.until}
	default:
		l = o.link
	}
	s.mu.Unlock()
	if l != nil {
		return l.status()
	}
	return st
}

// StartTurn starts a Planner turn for a person's @chopin message. Without an
// attached Planner, or while it works on another turn, it returns a
// *TurnRefused with the spec's wording; nothing is kept for later. Otherwise
// the turn runs in the background and req.Sink receives it, End included.
func (s *Server) StartTurn(ctx context.Context, documentID string, req TurnRequest) error {
	if err := req.check(); err != nil {
		return err
	}
	l := s.attached(documentID)
	if l != nil {
		// "An @chopin message makes the same check first": a stale link is
		// closed, and the message refused as without an attached Planner.
		if l.recheck(ctx) {
			if req.Mode != wire.ModeIsolated {
				l.awaitEnds(ctx)
			}
			return l.startTurn(req)
		}
	}
	return s.notAttached(ctx, documentID)
}

// notAttached words the refusal of a turn for a document without an attached Planner.
func (s *Server) notAttached(ctx context.Context, documentID string) error {
	s.mu.Lock()
	o := s.owners[documentID]
	var login string
	if o != nil {
		login = o.login
	}
	s.mu.Unlock()
	if login != "" {
		if o.link != nil && o.link.rs.suspended.Load() {
			return &TurnRefused{Code: CodePlannerNotAttached, Message: wire.MsgStillConnecting(login)}
		}
		return &TurnRefused{Code: CodePlannerNotAttached, Message: wire.MsgOffline(login)}
	}
	url, repo := documentID, "its repository"
	if doc, err := s.host.Document(ctx, documentID); err == nil {
		url, repo = doc.URL, doc.Repository
	}
	return &TurnRefused{Code: CodePlannerNotAttached, Message: wire.MsgNotAttached(url, repo)}
}

// Reset is a repository writer resetting the document's Planner: an attached
// link is refused with access-revoked and closed, and the ownership ends at
// once, grace period included, so anyone eligible can attach.
func (s *Server) Reset(documentID string) {
	s.endOwnership(documentID, func(login string) string { return wire.MsgReset(login) })
}

// DocumentArchived closes the document's link with access-revoked (4403) and
// ends its ownership.
func (s *Server) DocumentArchived(documentID string) {
	s.endOwnership(documentID, wire.MsgArchived)
}

// DocumentDeleted is DocumentArchived for a deleted document.
func (s *Server) DocumentDeleted(documentID string) {
	s.endOwnership(documentID, wire.MsgDeleted)
}

func (s *Server) endOwnership(documentID string, words func(login string) string) {
	s.mu.Lock()
	o := s.owners[documentID]
	if o == nil {
		s.mu.Unlock()
		return
	}
	l := o.link
	if l != nil && l.rs.parked.Load() { // a kept hold ends for good (hold.go)
		s.releaseLocked(documentID, o)
		s.mu.Unlock()
		s.endHold(l)
		s.host.PlannerChanged(documentID, PlannerStatus{State: PlannerNone})
		return
	}
	if l == nil {
		s.releaseLocked(documentID, o)
	} else {
		o.ended = true // even if l is already closing and detaches on its own
	}
	s.mu.Unlock()
	if l != nil {
		l.revoke(words(o.login))
		return
	}
	s.host.PlannerChanged(documentID, PlannerStatus{State: PlannerNone})
}

// RevokeBearer closes every link that attached with bearer, as when the
// local agent token is rotated, and returns how many it closed. Their
// ownership ends without a grace period.
func (s *Server) RevokeBearer(bearer string) int {
	sum := sha256.Sum256([]byte(bearer))
	s.mu.Lock()
	var hit []*link
	for l := range s.links {
		if l.bearer == sum {
			hit = append(hit, l)
		}
	}
	s.mu.Unlock()
	for _, l := range hit {
		l.revoke(wire.MsgReleased(l.account.Login))
	}
	return len(hit) + s.revokeHolds(sum)
}

// Shutdown closes every link with 1012 (the server is restarting) and waits
// for them to end, or for ctx. New upgrades are refused with 503.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	links := make([]*link, 0, len(s.links))
	for l := range s.links {
		links = append(links, l)
	}
	for id, o := range s.owners {
		if o.timer != nil {
			o.timer.Stop()
		}
		delete(s.owners, id)
	}
	s.mu.Unlock()
	s.announceRestart(links) // restart.go: every link hears it before any closes
	for _, l := range links {
		l.close(closing{code: wire.CloseRestarting, reason: "restarting", release: true, turnMessage: wire.MsgLinkClosed})
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		for _, l := range links {
			_ = l.conn.Close()
		}
		return ctx.Err()
	}
}

// Close is Shutdown without waiting.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.Shutdown(ctx)
	return nil
}

// attached returns the document's attached link, if any.
func (s *Server) attached(documentID string) *link {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.owners[documentID]; o != nil {
		return o.link
	}
	return nil
}

// claim makes l the Planner of doc, or returns the refusal.
func (s *Server) claim(l *link, doc Document) *wire.Refused {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &wire.Refused{Code: wire.CodeUnavailable, Message: wire.MsgUnavailable, Retry: true}
	}
	o := s.owners[doc.ID]
	if o != nil && o.link != nil {
		if done, refusal := s.claimHeldLocked(l, o); done {
			return refusal
		}
	}
	switch {
	case o == nil:
		o = &ownership{login: l.account.Login}
		s.owners[doc.ID] = o
	case o.link != nil:
		return &wire.Refused{Code: wire.CodePlannerAttached, Message: wire.MsgPlannerConnected(o.login)}
	case o.login != l.account.Login:
		return &wire.Refused{Code: wire.CodePlannerAttached, Message: wire.MsgPlannerKeeps(o.login, o.until)}
	default: // the owner comes back within its grace period
		o.timer.Stop()
		o.timer, o.until = nil, time.Time{}
	}
	o.link = l
	return nil
}

// detach ends l's hold on its document: the owner keeps it for the grace
// period, or loses it at once when release is set.
func (s *Server) detach(l *link, release bool) {
	id := l.doc.ID
	s.mu.Lock()
	o := s.owners[id]
	if o == nil || o.link != l {
		s.mu.Unlock()
		return
	}
	o.link = nil
	status := PlannerStatus{State: PlannerNone}
	if release || o.ended || s.closed || s.opts.Grace == 0 {
		s.releaseLocked(id, o)
	} else {
		o.until = s.opts.Clock().Add(s.opts.Grace)
		o.timer = time.AfterFunc(s.opts.Grace, func() { s.graceOver(id, o) })
		status = PlannerStatus{State: PlannerGrace, Login: o.login, Until: o.until}
	}
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		s.host.PlannerChanged(id, status)
	}
}

func (s *Server) graceOver(id string, o *ownership) {
	s.mu.Lock()
	if s.owners[id] != o || o.link != nil {
		s.mu.Unlock()
		return
	}
	s.releaseLocked(id, o)
	s.mu.Unlock()
	s.log.Info("planner ownership released after grace", "channel", id)
	s.host.PlannerChanged(id, PlannerStatus{State: PlannerNone})
}

func (s *Server) releaseLocked(id string, o *ownership) {
	if o.timer != nil {
		o.timer.Stop()
	}
	delete(s.owners, id)
}

func (s *Server) addLink(l *link) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.links[l] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) removeLink(l *link) {
	s.mu.Lock()
	delete(s.links, l)
	s.mu.Unlock()
	s.wg.Done()
}

func (s *Server) newLinkID() string { return fmt.Sprintf("l%d", s.nextLink.Add(1)) }

// check validates a turn request against the limits of the turn message.
func (r *TurnRequest) check() error {
	if r.Sink == nil {
		return fmt.Errorf("agentconn: a turn needs a Sink")
	}
	switch r.Mode {
	case "", wire.ModePlanner, wire.ModeIsolated:
	default:
		return fmt.Errorf("agentconn: session mode %q is not planner or isolated", r.Mode)
	}
	if err := wire.CheckTools(r.Tools); err != nil {
		return fmt.Errorf("agentconn: %w", err)
	}
	frame, err := wire.Encode(r.message(maxIDString, maxIDString))
	if err != nil {
		return fmt.Errorf("agentconn: %w", err)
	}
	if len(frame) > wire.MaxFrameBytes {
		return fmt.Errorf("agentconn: the turn is %d bytes, over the 2 MiB frame limit", len(frame))
	}
	return nil
}

// maxIDString stands in for the ids when sizing a turn before it has them.
var maxIDString = string(slices.Repeat([]byte("x"), 24))

func (r *TurnRequest) message(session, turn string) wire.Turn {
	tools := r.Tools
	if tools == nil {
		tools = []wire.Tool{}
	}
	return wire.Turn{Session: session, Turn: turn, Prompt: r.Prompt, Instructions: r.Instructions,
		Model: r.Model, ThinkingLevel: r.ThinkingLevel, Attachments: r.Attachments, ChatMessage: r.ChatMessage, Retry: r.Retry,
		Tools: tools, ResponseFormat: r.ResponseFormat}
}
