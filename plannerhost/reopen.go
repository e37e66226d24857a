package plannerhost

import (
	"context"
	"errors"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// What a resumable agent link keeps is stored in planner_link_holds, in local
// mode too (DESIGN.md section 3, "Server restart"): a person quitting and
// relaunching Chopin does not lose a resumable client's work. agentconn
// writes the holds through holdStore and, after a restart, waits again on the
// Decisions of the questions a hold kept through Reopen.

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

var _ agentconn.Reopener = agentHost{}

// Reopen waits again on the Decisions a question asked before a restart:
// they are still open in the document, and their answer goes to the
// client's own request, once.
func (h agentHost) Reopen(ctx context.Context, q *agentconn.Question) error {
	a := h.a
	request := q.Decisions()
	if request == "" {
		return errors.New("the question has no Decisions")
	}
	ch, err := a.store.Channel(ctx, q.Document)
	if err != nil {
		return err
	}
	r, release, err := a.hub.Acquire(ctx, a.roomChannel(ch))
	if err != nil {
		return err
	}
	oq := &openQuestion{r: r, request: request, release: release}
	a.questions.mu.Lock()
	if a.questions.m == nil {
		a.questions.m = map[*agentconn.Question]*openQuestion{}
	}
	a.questions.m[q] = oq
	a.questions.mu.Unlock()
	if !r.Await(request, func(o room.Outcome) {
		a.questions.settled(q)
		a.answered(q, request, o, answerOf(o)) // agent_answers.go
	}) {
		a.questions.settled(q)
		return errors.New("its Decisions are no longer open")
	}
	return nil
}
