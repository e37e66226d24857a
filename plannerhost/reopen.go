package plannerhost

import (
	"context"
	"errors"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/room"
)

// What a resumable agent link keeps is stored, in local mode too (DESIGN.md
// section 3, "Server restart"): a person quitting and relaunching Chopin
// does not lose a resumable client's work. agentconn writes the holds
// through the HoldStore app gives it and, after a restart, waits again on
// the Decisions of the questions a hold kept through Reopen.

var _ agentconn.Reopener = (*Host)(nil)

// Reopen waits again on the Decisions a question asked before a restart:
// they are still open in the document, and their answer goes to the
// client's own request, once.
func (h *Host) Reopen(ctx context.Context, q *agentconn.Question) error {
	request := q.Decisions()
	if request == "" {
		return errors.New("the question has no Decisions")
	}
	ch, err := h.docs.Document(ctx, q.Document)
	if err != nil {
		return err
	}
	r, release, err := h.hub.Acquire(ctx, ch)
	if err != nil {
		return err
	}
	oq := &openQuestion{r: r, request: request, release: release}
	h.questions.mu.Lock()
	if h.questions.m == nil {
		h.questions.m = map[*agentconn.Question]*openQuestion{}
	}
	h.questions.m[q] = oq
	h.questions.mu.Unlock()
	if !r.Await(request, func(o room.Outcome) {
		h.questions.settled(q)
		h.answered(q, request, o, answerOf(o))
	}) {
		h.questions.settled(q)
		return errors.New("its Decisions are no longer open")
	}
	return nil
}
