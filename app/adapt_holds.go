package app

import (
	"context"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/store"
)

// What a resumable agent link keeps is stored in planner_link_holds, in local
// mode too (DESIGN.md section 3, "Server restart"): a person quitting and
// relaunching Chopin does not lose a resumable client's work. agentconn
// writes the holds through holdStore and, after a restart, waits again on the
// Decisions of the questions a hold kept through plannerhost's Reopen.

// holdStore is the store as agentconn's HoldStore.
type holdStore struct{ s *store.Store }

var _ agentconn.HoldStore = holdStore{}

func (h holdStore) SaveHold(ctx context.Context, hold agentconn.StoredHold) error {
	return h.s.SaveLinkHold(ctx, store.LinkHold{ChannelID: hold.Document, Login: hold.Login, Window: hold.Window, Body: hold.Body})
}

func (h holdStore) DeleteHold(ctx context.Context, documentID string) error {
	return h.s.DeleteLinkHold(ctx, documentID)
}

func (h holdStore) Holds(ctx context.Context) ([]agentconn.StoredHold, error) {
	rows, err := h.s.LinkHolds(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]agentconn.StoredHold, len(rows))
	for i, r := range rows {
		out[i] = agentconn.StoredHold{Document: r.ChannelID, Login: r.Login, Window: r.Window, Body: r.Body}
	}
	return out, nil
}
