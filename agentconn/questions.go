package agentconn

import (
	"errors"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// requestMemory remembers the last n request ids a link received, so a
// repeated one is caught even after its question closed ("Client to server").
type requestMemory struct {
	ring []string
	next int
	ids  map[string]bool
}

func newRequestMemory(n int) requestMemory {
	return requestMemory{ring: make([]string, n), ids: make(map[string]bool, n)}
}

func (m *requestMemory) has(id string) bool { return m.ids[id] }

func (m *requestMemory) add(id string) {
	if old := m.ring[m.next]; old != "" {
		delete(m.ids, old)
	}
	m.ring[m.next] = id
	m.ids[id] = true
	m.next = (m.next + 1) % len(m.ring)
}

func (l *link) inputRequest(m wire.InputRequest) {
	l.mu.Lock()
	if l.seen.has(m.Request) || l.questions[m.Request] != nil {
		l.mu.Unlock()
		l.protocolError(wire.CodeProtocol, wire.MsgRepeatedRequest(m.Request))
		return
	}
	l.seen.add(m.Request)
	q := &Question{Document: l.doc.ID, Session: m.Session, Request: m.Request, WorkflowRunID: m.WorkflowRunID,
		WorkflowStageID: m.WorkflowStageID, RootRunID: m.RootRunID, Block: m.Block, Input: m.Input}
	q.link.Store(l)
	sess := l.sessions[m.Session]
	var refusal *wire.Answer
	switch {
	case sess == nil:
		// Its session ended: withdrawn before it was asked.
		refusal = &wire.Answer{Status: wire.AnswerCancelled}
	case sess.mode == wire.ModeIsolated:
		refusal = &wire.Answer{Status: wire.AnswerFailed, Message: wire.MsgIsolatedAsk}
	case len(l.questions) >= wire.MaxOpenRequests:
		refusal = &wire.Answer{Status: wire.AnswerFailed, Message: wire.MsgTooManyOpen}
	}
	if refusal != nil {
		if res, err := refusal.Result(q.Request, &q.Input); err == nil {
			l.send(res)
		}
		l.mu.Unlock()
		return
	}
	l.questions[q.Request] = q
	sess.questions[q.Request] = q
	l.mu.Unlock()

	if err := l.srv.host.Ask(l.ctx, q); err != nil {
		message := wire.MsgAskFailed
		var te *wire.ToolError
		if errors.As(err, &te) {
			message = te.Message
		} else {
			l.log.Warn("ask failed", "session", q.Session, "request", q.Request, "err", err)
		}
		_ = l.answer(q, wire.Answer{Status: wire.AnswerFailed, Message: message})
	}
}

// answer settles q with a: the client gets its input-result now, or once the
// run that owns the question is no longer paused.
func (l *link) answer(q *Question, a wire.Answer) error {
	res, err := a.Result(q.Request, &q.Input)
	if err != nil {
		return err
	}
	var fx effects
	l.mu.Lock()
	defer func() { l.mu.Unlock(); fx.run(l) }()
	if q.link.Load() != l {
		return errMoved // a resume moved it to another link meanwhile
	}
	if q.settled || l.state == stateClosed && !l.rs.parked.Load() {
		return ErrQuestionClosed
	}
	defer l.heldChangedLocked(&fx) // a parked link stores the answer it holds
	q.settled = true
	sess := l.sessions[q.Session]
	if sess != nil && q.root() != "" && contains(sess.paused, q.root()) {
		q.held = &res // "a paused run stays stopped"
		return nil
	}
	l.deliverLocked(q, res, &fx)
	return nil
}

// deliverLocked sends q's result and forgets the question.
func (l *link) deliverLocked(q *Question, res wire.InputResult, fx *effects) {
	q.held = nil
	delete(l.questions, q.Request)
	l.rememberResultLocked(q, res)
	l.send(res)
	if sess := l.sessions[q.Session]; sess != nil {
		delete(sess.questions, q.Request)
		l.settleLocked(sess, fx)
	}
}

// releaseHeldLocked sends the answers held for runs that are no longer paused.
func (l *link) releaseHeldLocked(sess *session, fx *effects) {
	for _, q := range sess.questions {
		if q.held != nil && !contains(sess.paused, q.root()) {
			l.deliverLocked(q, *q.held, fx)
		}
	}
}

func (l *link) inputCancel(m wire.InputCancel) {
	var fx effects
	l.mu.Lock()
	if q := l.questions[m.Request]; q != nil {
		l.withdrawLocked(q, &fx)
		if sess := l.sessions[q.Session]; sess != nil {
			l.settleLocked(sess, &fx)
		}
	}
	l.mu.Unlock()
	fx.run(l)
}

// withdrawLocked cancels an open question: its Decisions are withdrawn and,
// while the link is open, the client gets a cancelled result. An answer
// held for a paused run is dropped with it.
func (l *link) withdrawLocked(q *Question, fx *effects) {
	delete(l.questions, q.Request)
	if sess := l.sessions[q.Session]; sess != nil {
		delete(sess.questions, q.Request)
	}
	wasOpen := !q.settled
	q.settled, q.held = true, nil
	if res, err := (wire.Answer{Status: wire.AnswerCancelled}).Result(q.Request, &q.Input); err == nil {
		l.send(res)
	}
	if wasOpen {
		fx.add(func() { l.srv.host.Withdraw(q) })
	}
}
