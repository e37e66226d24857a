package agentconn

import (
	"slices"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Resuming a hold (spec/agent-connection.md, "Resuming after a dropped
// link", "Ownership"): the same account attaches again offering
// resumable-sessions and sends resume first; the sessions it names come back
// with their questions, the answers it has not acknowledged are sent again
// after resumed, and the Stops held for it go first.

// claimHeldLocked is claim for a document whose Planner has a link: a hold
// (parked) goes to the same account, which must resume it; another account
// is refused. A live link of the same account, when both offered
// resumable-sessions, may be one that died unnoticed: the new link is
// attached unconfirmed, and only a resume naming one of the old link's
// sessions takes it over. done is false when claim should refuse as usual.
func (s *Server) claimHeldLocked(l *link, o *ownership) (done bool, refusal *wire.Refused) {
	cur := o.link
	if cur.rs.parked.Load() {
		if o.login != l.account.Login {
			return true, &wire.Refused{Code: wire.CodePlannerAttached, Message: wire.MsgPlannerDropped(o.login)}
		}
		l.mu.Lock()
		l.rs.from = cur
		l.mu.Unlock()
		o.link = l
		return true, nil
	}
	if o.login == l.account.Login && l.has(wire.FeatureResumableSessions) && cur.has(wire.FeatureResumableSessions) {
		l.mu.Lock()
		l.rs.from, l.rs.unconfirmed = cur, true
		l.mu.Unlock()
		return true, nil
	}
	return false, nil
}

// afterAttach runs once attached was sent. A client that does not resume
// ends the hold it attached over. It reports whether the link is
// unconfirmed, which shows nothing to the document yet.
func (l *link) afterAttach() (unconfirmed bool) {
	resumable := l.has(wire.FeatureResumableSessions)
	l.mu.Lock()
	from := l.rs.from
	unconfirmed = l.rs.unconfirmed
	l.rs.first = resumable
	if !resumable {
		l.rs.from = nil
	}
	l.mu.Unlock()
	if from != nil && !resumable {
		l.srv.endHoldFor(from, true)
	}
	return unconfirmed
}

// firstAfterAttached handles resume and input-received, and what the first
// message after attached decides: a resume takes the hold over; anything
// else ends it (an unconfirmed link is refused instead). It reports whether
// msg was handled.
func (l *link) firstAfterAttached(msg wire.Message) bool {
	l.mu.Lock()
	first, from, unconfirmed := l.rs.first, l.rs.from, l.rs.unconfirmed
	if first {
		l.rs.first, l.rs.from, l.rs.unconfirmed = false, nil, false
	}
	l.mu.Unlock()
	switch m := msg.(type) {
	case wire.ResumeSessions:
		switch {
		case !l.has(wire.FeatureResumableSessions):
			l.protocolError(wire.CodeProtocol, wire.MsgUnoffered(m.MessageType()))
		case !first:
			l.protocolError(wire.CodeProtocol, wire.MsgResumeFirst)
		default:
			l.resume(m, from, unconfirmed)
		}
		return true
	case wire.InputReceived:
		if !l.has(wire.FeatureResumableSessions) {
			l.protocolError(wire.CodeProtocol, wire.MsgUnoffered(m.MessageType()))
			return true
		}
	}
	if first && unconfirmed {
		l.refuse(wire.Refused{Code: wire.CodePlannerAttached, Message: wire.MsgPlannerConnected(from.account.Login)})
		return true
	}
	if first && from != nil {
		l.srv.endHoldFor(from, true) // anything else first: the kept sessions end
	}
	if m, ok := msg.(wire.InputReceived); ok {
		l.inputReceived(m)
		return true
	}
	return false
}

// resume answers the client's resume with resumed.
func (l *link) resume(m wire.ResumeSessions, from *link, unconfirmed bool) {
	if unconfirmed {
		var ok bool
		if from, ok = l.takeOver(m, from); !ok {
			return
		}
	}
	var fx effects
	resumed := wire.Resumed{Sessions: []wire.ResumedSession{}}
	var results []wire.InputResult
	var owed []stopKey
	if from != nil {
		from.mu.Lock()
		if !from.rs.parked.Swap(false) {
			from.mu.Unlock()
			from = nil
		}
	}
	l.mu.Lock()
	if from != nil {
		resumed.Sessions, results, owed = l.moveLocked(from, m, &fx)
		from.mu.Unlock()
	}
	l.send(resumed)
	// The Stops held for the client go first, then the answers it has not
	// acknowledged.
	for _, k := range owed {
		req := newID("c-")
		l.sentControlLocked(req, k.session, k.run, true)
		l.send(wire.Stop{Request: req, Session: k.session, Run: k.run})
	}
	for _, r := range results {
		l.send(r)
	}
	for _, sess := range l.sessions {
		l.settleLocked(sess, &fx)
	}
	l.mu.Unlock()
	fx.run(l)
	if from != nil {
		l.srv.deleteHold(from)
		l.log.Info("resumed", "sessions", len(resumed.Sessions), "answers", len(results), "stops", len(owed))
	}
	l.srv.host.PlannerChanged(l.doc.ID, l.status())
}

// takeOver confirms an unconfirmed link: a resume naming a session the old
// link holds shows the client is the same one returning, so the old link
// is closed as the drop it is, keeping its work, and this link becomes the
// Planner. It returns the old link's hold, nil when it kept nothing.
func (l *link) takeOver(m wire.ResumeSessions, old *link) (*link, bool) {
	old.mu.Lock()
	names := slices.ContainsFunc(m.Sessions, func(s wire.ResumedSession) bool { return old.sessions[s.Session] != nil })
	old.mu.Unlock()
	if !names {
		l.refuse(wire.Refused{Code: wire.CodePlannerAttached, Message: wire.MsgPlannerConnected(old.account.Login)})
		return nil, false
	}
	old.close(closing{code: wire.CloseUnresponsive, reason: "unresponsive", abrupt: true, turnMessage: wire.MsgLinkClosed})
	s := l.srv
	s.mu.Lock()
	o := s.owners[l.doc.ID]
	switch {
	case s.closed:
		s.mu.Unlock()
		l.refuse(wire.Refused{Code: wire.CodeUnavailable, Message: wire.MsgUnavailable, Retry: true})
		return nil, false
	case o == nil:
		o = &ownership{login: l.account.Login}
		s.owners[l.doc.ID] = o
	case o.link == old || o.link == nil && o.login == l.account.Login:
		if o.timer != nil {
			o.timer.Stop()
		}
		o.timer, o.until = nil, time.Time{}
	default:
		login := o.login
		s.mu.Unlock()
		l.refuse(wire.Refused{Code: wire.CodePlannerAttached, Message: wire.MsgPlannerConnected(login)})
		return nil, false
	}
	o.link = l
	s.mu.Unlock()
	return old, true
}

// moveLocked gives the sessions resume names, with the requests it still
// waits on, from the hold to l; the rest of the hold ends. It returns what
// resumed lists, the results to send again and the Stops owed. Both links'
// locks are held, the hold's first.
func (l *link) moveLocked(from *link, m wire.ResumeSessions, fx *effects) ([]wire.ResumedSession, []wire.InputResult, []stopKey) {
	from.rs.suspended.Store(false)
	if from.rs.window != nil {
		from.rs.window.Stop()
		from.rs.window = nil
	}
	named := map[string]map[string]bool{}
	for _, s := range m.Sessions {
		reqs := named[s.Session]
		if reqs == nil {
			reqs = map[string]bool{}
			named[s.Session] = reqs
		}
		for _, r := range s.Requests {
			reqs[r] = true
		}
	}
	ids := make([]string, 0, len(from.sessions))
	for id := range from.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := []wire.ResumedSession{}
	index := map[string]int{}
	for _, id := range ids {
		sess := from.sessions[id]
		reqs, ok := named[id]
		if !ok {
			// The client no longer holds it; the answers it was not given
			// reach the Planner as turns of their own.
			from.lostAnswersLocked(sess, fx)
			from.endSessionLocked(sess, "", false, fx)
			continue
		}
		delete(from.sessions, id)
		held := []string{}
		for req, q := range sess.questions {
			if !reqs[req] {
				// The client no longer waits on it: withdrawn, as input-cancel
				// withdraws it. An answer held for a paused run it never got
				// reaches the Planner as a turn.
				if q.held != nil {
					from.lostAnswerLocked(q.decisions, fx)
				}
				from.withdrawLocked(q, fx)
				delete(sess.questions, req)
				continue
			}
			delete(from.questions, req)
			q.link.Store(l)
			l.questions[req] = q
			l.seen.add(req)
			held = append(held, req)
		}
		l.sessions[id] = sess
		index[id] = len(out)
		out = append(out, wire.ResumedSession{Session: id, Requests: held})
	}
	var results []wire.InputResult
	for _, req := range from.rs.unackedOrder {
		h, ok := from.rs.unacked[req]
		if !ok || l.sessions[h.session] == nil || !named[h.session][req] {
			continue // a request resume no longer names was settled: let go
		}
		q := &Question{Session: h.session, Request: req}
		l.rememberResultLocked(q, h.res)
		l.seen.add(req)
		results = append(results, h.res)
		i := index[h.session]
		out[i].Requests = append(out[i].Requests, req)
	}
	for i := range out {
		slices.Sort(out[i].Requests)
	}
	var owed []stopKey
	for _, k := range from.rs.owed {
		if l.sessions[k.session] != nil {
			owed = append(owed, k)
		}
	}
	from.rs.unacked, from.rs.unackedOrder, from.rs.owed = nil, nil, nil
	return out, results, owed
}

// inputReceived releases an input-result the client acknowledged.
func (l *link) inputReceived(m wire.InputReceived) {
	var fx effects
	l.mu.Lock()
	if h, ok := l.rs.unacked[m.Request]; ok {
		l.forgetResultLocked(m.Request)
		if sess := l.sessions[h.session]; sess != nil {
			l.settleLocked(sess, &fx)
		}
	}
	l.mu.Unlock()
	fx.run(l)
}
