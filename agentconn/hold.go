package agentconn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// A link that offered resumable-sessions and drops unexpectedly with a
// started session that has a live or paused run, an open question or an
// answer its client has not acknowledged keeps that work: the link becomes
// its own hold ("parked"), stays the document's Planner as a disconnected
// one, keeps its Decisions open and answerable, holds the answers given and
// the Stops pressed meanwhile, and has no deadline
// (spec/agent-connection.md, "Resuming after a dropped link"). resume.go
// gives a hold to the link that resumes it; restart.go carries holds over a
// restart through a HoldStore.

// errMoved tells Question.Answer to try again on the question's new link.
var errMoved = errors.New("agentconn: the question moved to another link")

// resumable is a link's part in resumable-sessions. Its plain fields are
// guarded by link.mu.
type resumable struct {
	parked    atomic.Bool // the socket is gone and the link holds its work
	suspended atomic.Bool // rebuilt after a restart, inside the hand-over window
	window    *time.Timer // ends the hand-over window

	from        *link // at attach: the hold (or, unconfirmed, the live link) a resume takes over
	unconfirmed bool  // from is still attached: only a resume naming its session takes it over
	first       bool  // the first message after attached is still to come

	unacked      map[string]heldResult // input-results the client has not acknowledged, by request
	unackedOrder []string
	stopReqs     map[string]stopKey // stops sent and not answered, by request id
	resumeReqs   map[string]stopKey // resumes sent and not answered
	owed         []stopKey          // parked: the stops to send after resumed

}

// holdWrites orders the writes of holds to a HoldStore: a hold's snapshot
// and its write happen together, so a later state is never overwritten by
// an earlier one.
var holdWrites sync.Mutex

// heldResult is an input-result kept until input-received.
type heldResult struct {
	session   string
	res       wire.InputResult
	decisions string // the question's Decisions (SetDecisions)
}

// stopKey is a Stop of a session's every run (run empty) or of one run.
type stopKey struct {
	session, run string
}

func addStop(owed []stopKey, k stopKey) []stopKey {
	if slices.Contains(owed, k) {
		return owed // one stop, however many times it was pressed
	}
	return append(owed, k)
}

// plannerStateLocked is what the link's PlannerStatus shows: a hold inside
// its hand-over window shows the Planner attached, any other as disconnected.
func (l *link) plannerStateLocked() PlannerState {
	if l.rs.parked.Load() && !l.rs.suspended.Load() {
		return PlannerDisconnected
	}
	return PlannerAttached
}

// rememberResultLocked keeps an input-result a resumable client has to
// acknowledge ("input-received").
func (l *link) rememberResultLocked(q *Question, res wire.InputResult) {
	if !l.has(wire.FeatureResumableSessions) {
		return
	}
	if l.rs.unacked == nil {
		l.rs.unacked = map[string]heldResult{}
	}
	if _, ok := l.rs.unacked[q.Request]; !ok {
		l.rs.unackedOrder = append(l.rs.unackedOrder, q.Request)
	}
	l.rs.unacked[q.Request] = heldResult{session: q.Session, res: res, decisions: q.decisions}
}

func (l *link) forgetResultLocked(request string) {
	delete(l.rs.unacked, request)
	if i := slices.Index(l.rs.unackedOrder, request); i >= 0 {
		l.rs.unackedOrder = slices.Delete(l.rs.unackedOrder, i, i+1)
	}
}

// awaitsReceiptLocked reports whether the session waits to deliver a result:
// it is kept until the client acknowledges it.
func (l *link) awaitsReceiptLocked(sess *session) bool {
	for _, h := range l.rs.unacked {
		if h.session == sess.id {
			return true
		}
	}
	return false
}

// heldChangedLocked stores a parked link's hold again once what it holds changed.
func (l *link) heldChangedLocked(fx *effects) {
	if l.rs.parked.Load() {
		fx.add(func() { l.srv.saveHold(l, false) })
	}
}

// sentControlLocked records a stop or resume sent to the client: a stop is
// owed until the client answers it.
func (l *link) sentControlLocked(req, session, run string, stop bool) {
	if !l.has(wire.FeatureResumableSessions) {
		return
	}
	m := &l.rs.resumeReqs
	if stop {
		m = &l.rs.stopReqs
	}
	if *m == nil {
		*m = map[string]stopKey{}
	}
	(*m)[req] = stopKey{session, run}
}

// controlAnsweredLocked settles a stop the client answered, whether it
// applied or refused it, and undoes the owed stops a resume it answered covers.
func (l *link) controlAnsweredLocked(m wire.ControlResult) {
	delete(l.rs.stopReqs, m.Request)
	k, ok := l.rs.resumeReqs[m.Request]
	if !ok {
		return
	}
	delete(l.rs.resumeReqs, m.Request)
	if !m.OK {
		return
	}
	// A resume of every run undoes the session's stops; one of a run only that run's.
	covered := func(s stopKey) bool { return s.session == k.session && (k.run == "" || s.run == k.run) }
	for req, s := range l.rs.stopReqs {
		if covered(s) {
			delete(l.rs.stopReqs, req)
		}
	}
	l.rs.owed = slices.DeleteFunc(l.rs.owed, covered)
}

// closeSessionsLocked ends the link's sessions as it closes, except what a
// resumable link keeps when it drops (or the server restarts under it). It
// reports whether the link is now parked with work kept. A restart withdraws
// no question of any link: their Decisions stay open in the document.
func (l *link) closeSessionsLocked(c closing, wasAttached bool, fx *effects) bool {
	restart := c.code == wire.CloseRestarting
	keep := wasAttached && l.has(wire.FeatureResumableSessions) && !l.rs.unconfirmed &&
		(c.dropped || c.code == wire.CloseUnresponsive || restart)
	for _, sess := range l.sessions {
		switch {
		case keep && sess.started && (sess.live() || len(sess.questions) > 0 || l.awaitsReceiptLocked(sess)):
			l.failTurnKeepingLocked(sess, c.turnMessage, fx)
		case restart:
			l.failTurnKeepingLocked(sess, c.turnMessage, fx)
			delete(l.sessions, sess.id)
			for _, q := range sess.questions {
				delete(l.questions, q.Request)
				q.settled, q.held = true, nil
			}
		default:
			l.endSessionLocked(sess, c.turnMessage, false, fx)
		}
	}
	for req, h := range l.rs.unacked {
		if l.sessions[h.session] == nil {
			l.forgetResultLocked(req)
		}
	}
	if !keep || len(l.sessions) == 0 {
		return false
	}
	for _, k := range l.rs.stopReqs {
		if l.sessions[k.session] != nil {
			l.rs.owed = addStop(l.rs.owed, k)
		}
	}
	l.rs.stopReqs, l.rs.resumeReqs = nil, nil
	l.rs.parked.Store(true)
	return true
}

// failTurnKeepingLocked fails the session's turn, as any close does, and
// keeps the session.
func (l *link) failTurnKeepingLocked(sess *session, message string, fx *effects) {
	if sess.startTimer != nil {
		sess.startTimer.Stop()
	}
	t := sess.turn
	if t == nil {
		return
	}
	o := TurnOutcome{Status: "failed", Message: message}
	t.ended = true
	t.cancel()
	if t.abortTimer != nil {
		t.abortTimer.Stop()
	}
	sess.turn = nil
	fx.add(func() { t.emit(func(s TurnSink) { s.End(o) }, true) })
}

// linkClosed settles the document's ownership once l closed.
func (s *Server) linkClosed(l *link, parked, release bool) {
	l.mu.Lock()
	from, unconfirmed := l.rs.from, l.rs.unconfirmed
	l.rs.from = nil
	l.mu.Unlock()
	switch {
	case parked:
		s.park(l)
	case from != nil && !unconfirmed:
		// It closed before its first message: the hold it was to take over
		// stays kept for the client's next try.
		s.mu.Lock()
		o := s.owners[l.doc.ID]
		back := o != nil && o.link == l && !s.closed
		if back {
			o.link = from
		}
		s.mu.Unlock()
		if back {
			s.host.PlannerChanged(l.doc.ID, from.status())
			return
		}
		s.detach(l, release)
	default:
		s.detach(l, release)
	}
}

// park keeps a dropped link as its document's disconnected Planner: no
// grace period runs, and the hold is stored. At a restart's cut the stored
// hold asks the next process for a hand-over window.
func (s *Server) park(l *link) {
	s.mu.Lock()
	closed := s.closed
	o := s.owners[l.doc.ID]
	owner := o != nil && o.link == l
	s.mu.Unlock()
	if closed {
		s.saveHold(l, true)
		return
	}
	if !owner {
		s.endHold(l)
		return
	}
	l.log.Info("link dropped; its work is kept for the client's resume")
	s.saveHold(l, false)
	s.host.PlannerChanged(l.doc.ID, l.status())
}

// controlHeld is Stop Planner on a disconnected Planner: the Stop is held and
// sent first when the client resumes. Stop of a session that only waits on a
// question withdraws the question; once nothing is kept, the account holds
// the document for the grace period, as a detached one does. A Resume is not
// held.
func (s *Server) controlHeld(l *link, run string, stop bool) (ControlOutcome, error) {
	if !stop {
		return ControlOutcome{}, ErrNotAttached
	}
	out := ControlOutcome{Held: true}
	var fx effects
	l.mu.Lock()
	if !l.rs.parked.Load() {
		l.mu.Unlock()
		return out, ErrNotAttached
	}
	for _, sess := range l.sessions {
		if run == "" && !sess.live() {
			for _, q := range sess.questions {
				out.Withdrawn = append(out.Withdrawn, q.Request)
				l.withdrawLocked(q, &fx)
			}
			l.settleLocked(sess, &fx)
			continue
		}
		if run != "" && !sess.hasRun(run) || run == "" && !sess.live() {
			continue
		}
		l.rs.owed = addStop(l.rs.owed, stopKey{sess.id, run})
		out.Results = append(out.Results, ControlAnswer{Session: sess.id, Run: run})
	}
	empty := len(l.sessions) == 0
	l.mu.Unlock()
	fx.run(l)
	slices.Sort(out.Withdrawn)
	if empty {
		s.endHold(l)
		s.detach(l, false)
		return out, nil
	}
	s.saveHold(l, false)
	return out, nil
}

// endHold ends what a parked link kept, for good: its questions are
// withdrawn, its live runs show as stopped and its stored hold goes. The
// caller settles the ownership.
func (s *Server) endHold(l *link) { s.endHoldFor(l, false) }

// endHoldFor is endHold; lost is set when the client came back with nothing
// to resume, so the answers it was never given reach the Planner another
// way (Undelivered).
func (s *Server) endHoldFor(l *link, lost bool) {
	var fx effects
	l.mu.Lock()
	if !l.rs.parked.Swap(false) {
		l.mu.Unlock()
		return
	}
	l.rs.suspended.Store(false)
	if l.rs.window != nil {
		l.rs.window.Stop()
		l.rs.window = nil
	}
	for _, sess := range l.sessions {
		if lost {
			l.lostAnswersLocked(sess, &fx)
		}
		l.endSessionLocked(sess, "", false, &fx)
	}
	l.rs.unacked, l.rs.unackedOrder, l.rs.owed = nil, nil, nil
	l.mu.Unlock()
	fx.run(l)
	l.log.Info("kept work ended")
	s.deleteHold(l)
}

// revokeHolds ends the holds of links that attached with a revoked bearer.
func (s *Server) revokeHolds(sum [32]byte) int {
	s.mu.Lock()
	var hit []*link
	for id, o := range s.owners {
		if l := o.link; l != nil && l.rs.parked.Load() && l.bearer == sum {
			hit = append(hit, l)
			s.releaseLocked(id, o)
		}
	}
	s.mu.Unlock()
	for _, l := range hit {
		s.endHold(l)
		s.host.PlannerChanged(l.doc.ID, PlannerStatus{State: PlannerNone})
	}
	return len(hit)
}

// SetDecisions records the host's name for the question's Decisions, such
// as the room's request id, so the question can wait on them again after a
// restart (Reopener).
func (q *Question) SetDecisions(ref string) {
	for {
		l := q.link.Load()
		l.mu.Lock()
		if q.link.Load() == l {
			q.decisions = ref
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

// Decisions is what SetDecisions recorded.
func (q *Question) Decisions() string {
	for {
		l := q.link.Load()
		l.mu.Lock()
		if q.link.Load() == l {
			defer l.mu.Unlock()
			return q.decisions
		}
		l.mu.Unlock()
	}
}

// HoldStore keeps holds across a restart (planner_link_holds). Each method
// is one write or read; Body is agentconn's own JSON.
type HoldStore interface {
	SaveHold(ctx context.Context, h StoredHold) error
	DeleteHold(ctx context.Context, documentID string) error
	Holds(ctx context.Context) ([]StoredHold, error)
}

// StoredHold is one document's hold as stored.
type StoredHold struct {
	Document string
	Login    string
	Window   bool // a live link's cut: the next process gives it the hand-over window
	Body     []byte
}

// Reopener is implemented by a Host that can wait again on a question's
// Decisions after a restart: the Decisions the old process opened, named
// by q.Decisions(), still open in the document. Its answer comes through
// q.Answer as before. An error leaves the question out of the hold.
type Reopener interface {
	Reopen(ctx context.Context, q *Question) error
}

// holdBody is a hold as stored.
type holdBody struct {
	Login    string        `json:"login"`
	Bearer   string        `json:"bearer"` // hex SHA-256
	Features []string      `json:"features"`
	Sessions []heldSession `json:"sessions"`
	Stops    []heldStop    `json:"stops,omitempty"`
}

type heldSession struct {
	ID        string            `json:"id"`
	Mode      string            `json:"mode"`
	Active    []string          `json:"active"`
	Paused    []string          `json:"paused"`
	Cards     []json.RawMessage `json:"cards"`
	Questions []heldQuestion    `json:"questions"`
	Answers   []heldAnswer      `json:"answers"`
}

type heldQuestion struct {
	Request         string          `json:"request"`
	WorkflowRunID   string          `json:"workflowRunId,omitempty"`
	WorkflowStageID string          `json:"workflowStageId,omitempty"`
	RootRunID       string          `json:"rootRunId,omitempty"`
	Block           *wire.Block     `json:"block,omitempty"`
	Input           json.RawMessage `json:"input"`
	Decisions       string          `json:"decisions"`
}

type heldAnswer struct {
	Request   string           `json:"request"`
	Result    wire.InputResult `json:"result"`
	Decisions string           `json:"decisions,omitempty"`
}

type heldStop struct {
	Session string `json:"session"`
	Run     string `json:"run,omitempty"`
}

// holdBodyLocked is the parked link's hold as stored. An answer held for a
// paused run is stored as given: a restart does not carry the pause over.
func (l *link) holdBodyLocked() ([]byte, error) {
	b := holdBody{Login: l.account.Login, Bearer: hex.EncodeToString(l.bearer[:]), Features: l.features, Sessions: []heldSession{}}
	ids := make([]string, 0, len(l.sessions))
	for id := range l.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		sess := l.sessions[id]
		hs := heldSession{ID: id, Mode: sess.mode, Active: orEmpty(sess.active), Paused: orEmpty(sess.paused),
			Cards: []json.RawMessage{}, Questions: []heldQuestion{}, Answers: []heldAnswer{}}
		for _, run := range sess.runOrder {
			card := *sess.cards[run]
			if card.Stages == nil {
				card.Stages = []wire.Stage{}
			}
			raw, err := wire.Marshal(card)
			if err != nil {
				return nil, fmt.Errorf("run card %s: %w", run, err)
			}
			hs.Cards = append(hs.Cards, raw)
		}
		reqs := make([]string, 0, len(sess.questions))
		for r := range sess.questions {
			reqs = append(reqs, r)
		}
		slices.Sort(reqs)
		for _, r := range reqs {
			q := sess.questions[r]
			if q.held != nil {
				hs.Answers = append(hs.Answers, heldAnswer{Request: r, Result: *q.held, Decisions: q.decisions})
				continue
			}
			input, err := wire.Marshal(q.Input)
			if err != nil {
				return nil, fmt.Errorf("question %s: %w", r, err)
			}
			hs.Questions = append(hs.Questions, heldQuestion{Request: r, WorkflowRunID: q.WorkflowRunID,
				WorkflowStageID: q.WorkflowStageID, RootRunID: q.RootRunID, Block: q.Block, Input: input, Decisions: q.decisions})
		}
		for _, r := range l.rs.unackedOrder {
			if h, ok := l.rs.unacked[r]; ok && h.session == id {
				hs.Answers = append(hs.Answers, heldAnswer{Request: r, Result: h.res, Decisions: h.decisions})
			}
		}
		b.Sessions = append(b.Sessions, hs)
	}
	for _, k := range l.rs.owed {
		b.Stops = append(b.Stops, heldStop{Session: k.session, Run: k.run})
	}
	return wire.Marshal(b)
}

// saveHold stores a parked link's hold, unless it was resumed or ended meanwhile.
func (s *Server) saveHold(l *link, window bool) {
	if s.opts.Holds == nil {
		return
	}
	holdWrites.Lock()
	defer holdWrites.Unlock()
	l.mu.Lock()
	body, err := l.holdBodyLocked()
	parked := l.rs.parked.Load()
	l.mu.Unlock()
	if !parked {
		return
	}
	if err == nil {
		err = s.opts.Holds.SaveHold(context.Background(), StoredHold{Document: l.doc.ID, Login: l.account.Login, Window: window, Body: body})
	}
	if err != nil {
		l.log.Error("store the link's hold", "err", err)
	}
}

// deleteHold removes a hold that was resumed or ended.
func (s *Server) deleteHold(l *link) {
	if s.opts.Holds == nil {
		return
	}
	holdWrites.Lock()
	defer holdWrites.Unlock()
	if err := s.opts.Holds.DeleteHold(context.Background(), l.doc.ID); err != nil {
		l.log.Error("delete the link's hold", "err", err)
	}
}

// bearerSum reads a stored bearer digest.
func bearerSum(h string) [32]byte {
	var sum [32]byte
	if b, err := hex.DecodeString(h); err == nil && len(b) == sha256.Size {
		copy(sum[:], b)
	}
	return sum
}

func orEmpty(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// Undelivered is implemented by a Host that gives the Planner an answer its
// client is never given: the client came back with nothing to resume, or
// resumed without the session or the request, after a member had answered
// (spec/agent-connection.md, "After a server restart", "An answer its
// client is never given"). decisions is the question's Decisions, as
// SetDecisions named them. It is called once per answer, without any
// agentconn lock held.
type Undelivered interface {
	AnswerUndelivered(documentID, decisions string)
}

// lostAnswerLocked hands the host an answer its client will never be given.
func (l *link) lostAnswerLocked(decisions string, fx *effects) {
	u, ok := l.srv.host.(Undelivered)
	if !ok || decisions == "" {
		return
	}
	doc := l.doc.ID
	fx.add(func() { u.AnswerUndelivered(doc, decisions) })
}

// lostAnswersLocked hands the host every answer of sess its client was not
// given: held for a paused run, or sent and not acknowledged.
func (l *link) lostAnswersLocked(sess *session, fx *effects) {
	for _, q := range sess.questions {
		if q.held != nil {
			l.lostAnswerLocked(q.decisions, fx)
		}
	}
	for _, r := range l.rs.unackedOrder {
		if h, ok := l.rs.unacked[r]; ok && h.session == sess.id {
			l.lostAnswerLocked(h.decisions, fx)
		}
	}
}
