package agentconn

import (
	"context"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Refusal is the refusal StartTurn would give a person's request for a turn
// right now, in the spec's words, or nil when an attached Planner is idle. It
// starts nothing and does not check the link again (StartTurn does), so the
// application can refuse a message before keeping it: "No message is ever
// queued for a Planner."
func (s *Server) Refusal(ctx context.Context, documentID string) *TurnRefused {
	if l := s.attached(documentID); l != nil {
		l.awaitEnds(ctx)
		l.mu.Lock()
		attached, busy := l.state == stateAttached, l.ending > 0
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

// endsWait bounds how long a request for a turn waits for the Planner's
// last reply to be saved.
const endsWait = 2 * time.Second

// awaitEnds waits, a moment at most, until the sinks of the Planner turns
// that ended have taken End (their replies are saved). A person who answers
// a reply the moment it shows as finished starts the next turn; they are not
// refused as if the Planner were still busy.
func (l *link) awaitEnds(ctx context.Context) {
	l.mu.Lock()
	taken, ending := l.endsTaken, l.ending > 0
	l.mu.Unlock()
	if !ending {
		return
	}
	wait := time.NewTimer(endsWait)
	defer wait.Stop()
	select {
	case <-taken:
	case <-ctx.Done():
	case <-wait.C:
	}
}
