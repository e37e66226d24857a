package agentconn

import (
	"context"
	"slices"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// ControlOutcome is what Stop or Resume achieved.
type ControlOutcome struct {
	// Aborted is set when Stop aborted the turn the Planner was running.
	Aborted bool
	// Results has one entry per session that was sent stop or resume.
	Results []ControlAnswer
	// Withdrawn lists, by request id, the questions Stop withdrew: those of
	// a session with no run to pause, which only waited on them. Chat says
	// so ("Stop on a Planner that only waits on a question withdraws the
	// question explicitly").
	Withdrawn []string
	// Held is set when the Planner's link had dropped with its work kept
	// (resumable-sessions): the Stop is held and sent when it resumes.
	Held bool
}

// ControlAnswer is one session's control-result.
type ControlAnswer struct {
	Session  string
	Run      string // empty: every run of the session
	Answered bool   // false: no control-result within AnswerTimeout
	OK       bool
	Message  string
}

// Stop is Stop Planner: it aborts the running turn (when run is empty) and
// pauses every workflow run, or only run, then waits up to AnswerTimeout for
// the client's answers.
func (s *Server) Stop(ctx context.Context, documentID, run string) (ControlOutcome, error) {
	return s.control(ctx, documentID, run, true)
}

// Resume is Resume Planner: it resumes every paused workflow run, or only run.
func (s *Server) Resume(ctx context.Context, documentID, run string) (ControlOutcome, error) {
	return s.control(ctx, documentID, run, false)
}

func (s *Server) control(ctx context.Context, documentID, run string, stop bool) (ControlOutcome, error) {
	l := s.attached(documentID)
	if l == nil {
		return ControlOutcome{}, ErrNotAttached
	}
	if l.rs.parked.Load() {
		return s.controlHeld(l, run, stop) // hold.go: a Stop waits for the client's return
	}
	var out ControlOutcome
	var fx effects
	type pending struct {
		answer *ControlAnswer
		ch     chan wire.ControlResult
	}
	var waits []pending
	l.mu.Lock()
	if l.state != stateAttached {
		l.mu.Unlock()
		return out, ErrNotAttached
	}
	for _, sess := range l.sessions {
		// Stop Planner stops the Planner's turn; a background job's isolated
		// turn is not a person's to stop.
		if t := sess.plannerTurn(); stop && run == "" && t != nil && !t.ended && !t.aborted {
			l.abortTurnLocked(t, &fx)
			out.Aborted = true
		}
		if stop && run == "" && !sess.live() {
			// No run to pause: what keeps the session is its questions,
			// and a Stop that left them open would stop nothing.
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
		req := newID("c-")
		ch := make(chan wire.ControlResult, 1)
		l.controls[req] = ch
		if stop {
			l.send(wire.Stop{Request: req, Session: sess.id, Run: run})
		} else {
			l.send(wire.Resume{Request: req, Session: sess.id, Run: run})
		}
		l.sentControlLocked(req, sess.id, run, stop) // hold.go: a Stop is owed until answered
		out.Results = append(out.Results, ControlAnswer{Session: sess.id, Run: run})
		waits = append(waits, pending{ch: ch})
	}
	l.mu.Unlock()
	fx.run(l)
	slices.Sort(out.Withdrawn)
	for i := range waits {
		waits[i].answer = &out.Results[i]
	}

	deadline := time.NewTimer(s.opts.AnswerTimeout)
	defer deadline.Stop()
wait:
	for _, w := range waits {
		select {
		case r, ok := <-w.ch:
			if ok {
				w.answer.Answered, w.answer.OK, w.answer.Message = true, r.OK, r.Message
			}
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	// Forget what was not answered in time; a late answer is then ignored.
	l.mu.Lock()
	for k, ch := range l.controls {
		for _, w := range waits {
			if w.ch == ch {
				delete(l.controls, k)
			}
		}
	}
	l.mu.Unlock()
	return out, ctx.Err()
}

func (l *link) controlResult(m wire.ControlResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.controlAnsweredLocked(m)
	if ch, ok := l.controls[m.Request]; ok {
		delete(l.controls, m.Request)
		ch <- m
	}
}
