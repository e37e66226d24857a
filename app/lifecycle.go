package app

import "github.com/chopin-desktop/chopin/store"

// These are called after a document's catalog change has committed, so the
// live parts (open rooms, the attached Planner) follow the store.

// channelChanged: a rename, archive or restore reaches every open socket;
// an archived document turns read-only there, and its Planner's link is
// closed with access-revoked (4403).
// Archiving suspends its background jobs; a restore lets them run and
// ensures its description is for the current plan.
func (a *App) channelChanged(ch store.Channel) {
	a.hub.ChannelChanged(a.roomChannel(ch))
	if ch.Archived() {
		a.agent.DocumentArchived(ch.ID)
		a.describer.forget(ch.ID)
		a.describer.runner.Suspend(ch.ID)
		return
	}
	a.describer.runner.Unsuspend(ch.ID)
	go a.describer.ensure(ch.ID, 0)
}

// channelDeleting: before the delete transaction, live work stops: the
// Planner's link closes, its turn ends and its questions are withdrawn
// while their rows still exist.
// Its background jobs are cancelled (their rows go with the document).
func (a *App) channelDeleting(ch store.Channel) {
	a.describer.forget(ch.ID)
	a.describer.runner.Cancel(ch.ID)
	a.agent.DocumentDeleted(ch.ID)
}

// channelDeleted: after the delete committed, sockets get session:deleted
// and are closed for good, and what the app kept for the document goes.
func (a *App) channelDeleted(ch store.Channel) {
	a.hub.ChannelDeleted(ch.ID)
	a.planner.Forget(ch.ID)
}

// plannerReset releases the document's Planner ownership: an attached link
// is refused with access-revoked and closed, and any grace period ends.
func (a *App) plannerReset(ch store.Channel) {
	a.agent.Reset(ch.ID)
}

// agentTokenRotated closes agent links attached with the old token.
func (a *App) agentTokenRotated(old string) {
	if n := a.agent.RevokeBearer(old); n > 0 {
		a.log.Info("closed agent links of the rotated token", "links", n)
	}
}
