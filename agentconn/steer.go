package agentconn

import (
	"context"
	"errors"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// ErrNoTurn is Steer finding no turn to steer: the Planner is idle, so the
// message can start a turn of its own.
var ErrNoTurn = errors.New("agentconn: the Planner is not running a turn")

// SteerOutcome is the client's answer to a steer.
type SteerOutcome struct {
	OK       bool
	Answered bool   // false: no control-result within AnswerTimeout
	Message  string // the client's reason when it did not take it
}

// Steer gives the running turn a person's message (steer-turn), prompt as
// the model should read it ("@bo: ..."), and waits up to AnswerTimeout for
// the client's control-result. Without an attached Planner it returns
// ErrNotAttached, with an idle one ErrNoTurn, and with one that was not
// granted steer-turn the spec's planner-busy *TurnRefused. A refusal, or no
// answer in time, is final: the message is not sent again.
func (s *Server) Steer(ctx context.Context, documentID, prompt string) (SteerOutcome, error) {
	l := s.attached(documentID)
	if l == nil {
		return SteerOutcome{}, ErrNotAttached
	}
	l.mu.Lock()
	if l.state != stateAttached {
		l.mu.Unlock()
		return SteerOutcome{}, ErrNotAttached
	}
	var t *turn
	for _, sess := range l.sessions {
		if pt := sess.plannerTurn(); pt != nil && !pt.ended {
			t = pt
		}
	}
	switch {
	case t == nil:
		l.mu.Unlock()
		return SteerOutcome{}, ErrNoTurn
	case !l.has(wire.FeatureSteerTurn):
		l.mu.Unlock()
		return SteerOutcome{}, &TurnRefused{Code: CodePlannerBusy, Message: wire.MsgBusy}
	case !t.running || t.aborted:
		// Still starting, or being stopped: nothing on the client can read it.
		l.mu.Unlock()
		return SteerOutcome{Answered: true, Message: wire.MsgSteerNoTurn}, nil
	}
	req := newID("c-")
	ch := make(chan wire.ControlResult, 1)
	l.controls[req] = ch
	l.send(wire.Steer{Request: req, Session: t.sess.id, Turn: t.id, Prompt: prompt})
	l.mu.Unlock()

	deadline := time.NewTimer(s.opts.AnswerTimeout)
	defer deadline.Stop()
	var out SteerOutcome
	select {
	case r, ok := <-ch:
		if ok {
			out = SteerOutcome{OK: r.OK, Answered: true, Message: r.Message}
		}
	case <-deadline.C:
	case <-ctx.Done():
	}
	l.mu.Lock()
	if l.controls[req] == ch {
		delete(l.controls, req)
	}
	l.mu.Unlock()
	return out, nil
}

// Busy reports whether the document's attached Planner is working on a turn.
func (s *Server) Busy(documentID string) bool {
	l := s.attached(documentID)
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, sess := range l.sessions {
		if sess.plannerTurn() != nil {
			return true
		}
	}
	return false
}
