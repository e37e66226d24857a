package app

import "github.com/chopin-desktop/chopin/store"

// These are called after a document's catalog change has committed, so the
// live parts (open rooms, the attached Planner) follow the store.

// channelChanged: a rename, archive or restore.
func (a *App) channelChanged(ch store.Channel) {}

// channelDeleting: before the delete transaction, live work stops.
func (a *App) channelDeleting(ch store.Channel) {}

// channelDeleted: after the delete committed, sockets are told and closed.
func (a *App) channelDeleted(ch store.Channel) {}

// plannerReset releases the document's Planner ownership.
func (a *App) plannerReset(ch store.Channel) {}

// agentTokenRotated closes agent links attached with the old token.
func (a *App) agentTokenRotated() {}
