package agentconn

import (
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Session forks (session-forks). A thread's turn on a link granted the
// feature opens its session with fork, branched from the session and turn of
// the thread's last finished turn on the same link, instead of a fresh start
// that carries the whole conversation. A failed or aborted turn records no
// fork point, so a retry branches from the point before the failed attempt.
// Fork points live in the link's memory: a new connection starts afresh.
// When the client answers a fork with start-failed, the refused session is
// destroyed and the turn falls back to start with the full instructions.

// forkPoint is where a thread's next session may branch from.
type forkPoint struct{ session, turn string }

// openSessionLocked sends the session's opening message: fork when the turn
// continues a thread the link holds a fork point for, start otherwise.
func (l *link) openSessionLocked(sess *session, t *turn) {
	if p, ok := l.forks[t.req.Thread]; ok && t.req.Thread != "" && l.has(wire.FeatureSessionForks) {
		sess.from = &wire.ForkFrom{Session: p.session, Turn: p.turn}
		l.log.Info("forking session", "session", sess.id, "from", p.session, "fromTurn", p.turn)
		l.send(wire.Fork{Session: sess.id, Mode: sess.mode, From: *sess.from})
		return
	}
	l.send(wire.Start{Session: sess.id, Mode: sess.mode})
}

// forkTurn is the turn message for a session: a forked session already holds
// the conversation, so it gets the request's ForkInstructions when set.
func forkTurn(sess *session, req *TurnRequest, m wire.Turn) wire.Turn {
	if sess.from != nil && req.ForkInstructions != "" {
		m.Instructions = req.ForkInstructions
	}
	return m
}

// recordForkLocked keeps a finished thread turn's session and turn as the
// thread's next fork point.
func (l *link) recordForkLocked(t *turn, o TurnOutcome) {
	if o.Status != "finished" || t.req.Thread == "" || !l.has(wire.FeatureSessionForks) {
		return
	}
	if l.forks == nil {
		l.forks = map[string]forkPoint{}
	}
	l.forks[t.req.Thread] = forkPoint{session: t.sess.id, turn: t.id}
}

// forkRefusedLocked falls back when the client refused a fork: the refused
// session is destroyed, the thread's fork point forgotten, and the turn moves
// to a new session opened with start and the full instructions. It reports
// false when sess was not a fork still waiting to start.
func (l *link) forkRefusedLocked(sess *session, message string, fx *effects) bool {
	t := sess.turn
	if sess.from == nil || sess.started || t == nil || t.ended || t.aborted {
		return false
	}
	l.log.Info("fork refused; starting with the transcript", "session", sess.id, "err", message)
	delete(l.forks, t.req.Thread)
	sess.turn = nil
	l.endSessionLocked(sess, "", true, fx)
	next := &session{id: newID("s-"), mode: sess.mode, cards: map[string]*wire.RunCard{}, questions: map[string]*Question{}}
	next.turn = t
	t.sess = next
	l.sessions[next.id] = next
	next.startTimer = time.AfterFunc(l.srv.opts.AnswerTimeout, func() { l.startTimedOut(next) })
	l.send(wire.Start{Session: next.id, Mode: next.mode})
	return true
}
