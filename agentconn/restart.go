package agentconn

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// A restart (spec/agent-connection.md, "When the server is restarting",
// "After a server restart"): Shutdown tells every link before it closes any
// (restarting, for a client that offered restart-notice), closes each with
// 1012 and withdraws no question; a resumable link's work is stored as its
// hold. The next process's Restore rebuilds each hold as a suspended one:
// the Planner shows attached for the hand-over window, the client's resume
// is answered as usual, the same Decisions are waited on again, and each held
// answer is delivered once. When the window ends without a resume, the hold
// is disconnected and kept, as a dropped link is.

// announceRestart sends restarting to every attached link that asked for it.
func (s *Server) announceRestart(links []*link) {
	within := s.opts.HandoverWindow.Milliseconds()
	for _, l := range links {
		if !l.has(wire.FeatureRestartNotice) {
			continue
		}
		l.mu.Lock()
		if l.state == stateAttached {
			l.send(wire.Restarting{ReconnectWithinMs: within})
		}
		l.mu.Unlock()
	}
}

// Restore rebuilds the holds a previous process stored. Call it once, after
// New and before serving. A hold that cannot be read is dropped.
func (s *Server) Restore(ctx context.Context) error {
	if s.opts.Holds == nil {
		return nil
	}
	stored, err := s.opts.Holds.Holds(ctx)
	if err != nil {
		return fmt.Errorf("read link holds: %w", err)
	}
	for _, h := range stored {
		l, err := s.rebuild(ctx, h)
		if err != nil {
			s.log.Error("drop an unreadable link hold", "channel", h.Document, "err", err)
		}
		if l == nil {
			if err := s.opts.Holds.DeleteHold(ctx, h.Document); err != nil {
				return fmt.Errorf("delete link hold: %w", err)
			}
			continue
		}
		s.mu.Lock()
		if s.owners[h.Document] != nil || s.closed {
			s.mu.Unlock()
			continue
		}
		s.owners[h.Document] = &ownership{login: h.Login, link: l}
		s.mu.Unlock()
		if h.Window && s.opts.HandoverWindow > 0 {
			l.rs.suspended.Store(true)
			l.mu.Lock()
			l.rs.window = time.AfterFunc(s.opts.HandoverWindow, func() { s.windowOver(l) })
			l.mu.Unlock()
		}
		// Stored again without the window: a crash from here on leaves the
		// next process a disconnected hold.
		s.saveHold(l, false)
		l.log.Info("link hold restored", "channel", h.Document, "window", h.Window)
		for _, r := range l.keptRuns() {
			s.host.Runs(h.Document, r) // the run cards as they were
		}
		s.host.PlannerChanged(h.Document, l.status())
	}
	return nil
}

// rebuild makes a parked link of a stored hold. Its questions wait on their
// Decisions again (Reopener); one that cannot is left out. It returns nil
// when nothing is left to keep.
func (s *Server) rebuild(ctx context.Context, h StoredHold) (*link, error) {
	var b holdBody
	if err := wire.DecodeStrict(h.Body, &b); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	cancel()
	id := s.newLinkID()
	l := &link{
		srv: s, id: id, account: Account{Login: h.Login}, bearer: bearerSum(b.Bearer), features: b.Features,
		log: s.log.With("link", id), ctx: lctx, cancel: cancel, stop: make(chan struct{}),
		state: stateClosed, doc: Document{ID: h.Document}, since: s.opts.Clock(),
		sessions: map[string]*session{}, questions: map[string]*Question{},
		seen: newRequestMemory(rememberedRequests), controls: map[string]chan wire.ControlResult{},
	}
	close(l.stop)
	if !l.has(wire.FeatureResumableSessions) {
		return nil, fmt.Errorf("the hold's link did not offer %s", wire.FeatureResumableSessions)
	}
	l.rs.parked.Store(true)
	var waiting []*Question
	for _, hs := range b.Sessions {
		sess := &session{id: hs.ID, mode: hs.Mode, started: true, active: hs.Active, paused: hs.Paused,
			cards: map[string]*wire.RunCard{}, questions: map[string]*Question{}}
		for _, raw := range hs.Cards {
			var c wire.RunCard
			if err := wire.DecodeStrict(raw, &c); err != nil {
				return nil, fmt.Errorf("run card: %w", err)
			}
			if sess.cards[c.ID] == nil {
				sess.runOrder = append(sess.runOrder, c.ID)
			}
			sess.cards[c.ID] = &c
		}
		for _, hq := range hs.Questions {
			q := &Question{Document: h.Document, Session: hs.ID, Request: hq.Request, WorkflowRunID: hq.WorkflowRunID,
				WorkflowStageID: hq.WorkflowStageID, RootRunID: hq.RootRunID, Block: hq.Block, decisions: hq.Decisions}
			if err := wire.DecodeStrict(hq.Input, &q.Input); err != nil {
				return nil, fmt.Errorf("question %s: %w", hq.Request, err)
			}
			q.link.Store(l)
			sess.questions[q.Request] = q
			l.questions[q.Request] = q
			l.seen.add(q.Request)
			waiting = append(waiting, q)
		}
		for _, a := range hs.Answers {
			l.rememberResultLocked(&Question{Session: hs.ID, Request: a.Request, decisions: a.Decisions}, a.Result)
			l.seen.add(a.Request)
		}
		l.sessions[hs.ID] = sess
	}
	for _, st := range b.Stops {
		l.rs.owed = addStop(l.rs.owed, stopKey{st.Session, st.Run})
	}
	reopener, _ := s.host.(Reopener)
	for _, q := range waiting {
		var err error
		if reopener == nil {
			err = fmt.Errorf("the host cannot wait on Decisions again")
		} else {
			err = reopener.Reopen(ctx, q)
		}
		if err != nil {
			l.log.Info("a kept question is no longer open", "request", q.Request, "err", err)
			l.mu.Lock()
			if !q.settled {
				q.settled = true
				delete(l.questions, q.Request)
				if sess := l.sessions[q.Session]; sess != nil {
					delete(sess.questions, q.Request)
				}
			}
			l.mu.Unlock()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, sess := range l.sessions {
		if !sess.live() && len(sess.questions) == 0 && !l.awaitsReceiptLocked(sess) {
			delete(l.sessions, id)
		}
	}
	l.rs.owed = slices.DeleteFunc(l.rs.owed, func(k stopKey) bool { return l.sessions[k.session] == nil })
	if len(l.sessions) == 0 {
		return nil, nil
	}
	return l, nil
}

// windowOver ends a rebuilt hold's hand-over window without a resume: the
// Planner shows as disconnected and the hold stays for the client's return.
func (s *Server) windowOver(l *link) {
	if !l.rs.suspended.Swap(false) {
		return
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	l.log.Info("hand-over missed: the client is not back", "channel", l.doc.ID)
	s.host.PlannerChanged(l.doc.ID, l.status())
}

// keptRuns are a rebuilt hold's sessions' run cards, as last reported.
func (l *link) keptRuns() []RunsReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []RunsReport
	for _, sess := range l.sessions {
		if len(sess.runOrder) == 0 {
			continue
		}
		r := RunsReport{Document: l.doc.ID, Session: sess.id, Active: orEmpty(sess.active), Paused: orEmpty(sess.paused)}
		for _, id := range sess.runOrder {
			r.Cards = append(r.Cards, *sess.cards[id])
		}
		out = append(out, r)
	}
	return out
}
