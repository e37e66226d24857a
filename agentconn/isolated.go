package agentconn

// Isolated sessions (spec/agent-connection.md "Server to client": start with
// mode isolated): a background job's turn, on the document's attached link
// beside any Chat turn, with no tools of its own and no Decisions.

import (
	"context"
	"fmt"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// StartIsolated starts a background job's turn in an isolated session of
// the document's attached Planner; req.Sink receives it, End included. It
// offers no host tools (the turn carries tools: []). When ctx ends before
// the turn does, the turn is aborted. Without an attached Planner it
// returns ErrNotAttached; while another isolated turn runs on the link, a
// *TurnRefused with planner-busy.
func (s *Server) StartIsolated(ctx context.Context, documentID string, req TurnRequest) error {
	if len(req.Tools) > 0 {
		return fmt.Errorf("agentconn: an isolated turn offers no tools")
	}
	req.Mode = wire.ModeIsolated
	req.Thread, req.ForkInstructions = "", ""
	if err := req.check(); err != nil {
		return err
	}
	l := s.attached(documentID)
	if l == nil || !l.recheck(ctx) {
		return ErrNotAttached
	}
	t, err := l.openTurn(req)
	if err != nil {
		return err
	}
	go func() {
		select {
		case <-t.ctx.Done(): // the turn ended (or its link closed)
		case <-ctx.Done():
			var fx effects
			l.mu.Lock()
			l.abortTurnLocked(t, &fx)
			l.mu.Unlock()
			fx.run(l)
		}
	}()
	return nil
}
