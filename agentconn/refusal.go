package agentconn

import (
	"context"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Refusal is the refusal StartTurn would give a person's request for a turn
// right now, in the spec's words, or nil when an attached Planner is idle. It
// starts nothing and does not check the link again (StartTurn does), so the
// application can refuse a message before keeping it: "No message is ever
// queued for a Planner."
func (s *Server) Refusal(ctx context.Context, documentID string) *TurnRefused {
	if l := s.attached(documentID); l != nil {
		l.mu.Lock()
		attached, busy := l.state == stateAttached, false
		for _, sess := range l.sessions {
			busy = busy || sess.plannerTurn() != nil
		}
		l.mu.Unlock()
		switch {
		case attached && busy && l.has(wire.FeatureSteerTurn):
			return nil // the message is steered into the running turn
		case attached && busy:
			return &TurnRefused{Code: CodePlannerBusy, Message: wire.MsgBusy}
		case attached:
			return nil
		}
	}
	var tr *TurnRefused
	if err, ok := s.notAttached(ctx, documentID).(*TurnRefused); ok {
		tr = err
	}
	return tr
}
