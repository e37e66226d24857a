package agentconn

import "github.com/chopin-desktop/chopin/agentconn/wire"

func (l *link) runs(m wire.Runs) {
	if !l.has(wire.FeatureRunStageDeltas) {
		for _, c := range m.Cards {
			if c.StagesDelta {
				l.protocolError(wire.CodeMalformed, wire.MsgDeltaNoFeature)
				return
			}
		}
	}
	var fx effects
	l.mu.Lock()
	sess := l.sessions[m.Session]
	if sess == nil {
		l.mu.Unlock()
		return // a session that has ended: ignored
	}
	sess.active, sess.paused = m.Active, m.Paused
	for _, card := range m.Cards {
		c := sess.cards[card.ID]
		if c == nil {
			c = &wire.RunCard{}
			sess.cards[card.ID] = c
			sess.runOrder = append(sess.runOrder, card.ID)
		}
		c.Apply(card)
	}
	report := RunsReport{Document: l.doc.ID, Session: sess.id, Active: m.Active, Paused: m.Paused, Cards: m.Cards}
	fx.add(func() { l.srv.host.Runs(report.Document, report) })
	l.releaseHeldLocked(sess, &fx)
	l.settleLocked(sess, &fx)
	l.mu.Unlock()
	fx.run(l)
}

// stoppedRunsLocked is the last report of a session that ends: its live runs
// show as stopped. A full card with no stages keeps the stages the room has.
func (l *link) stoppedRunsLocked(sess *session) (RunsReport, bool) {
	now := l.srv.opts.Clock().Unix()
	var cards []wire.RunCard
	for _, id := range sess.runOrder {
		c := *sess.cards[id]
		if !c.Live() {
			continue
		}
		c.Status, c.Updated, c.Stages, c.EarlierStages = "stopped", now, []wire.Stage{}, nil
		cards = append(cards, c)
	}
	if len(cards) == 0 {
		return RunsReport{}, false
	}
	return RunsReport{Document: l.doc.ID, Session: sess.id, Active: []string{}, Paused: []string{}, Cards: cards, Closed: true}, true
}
