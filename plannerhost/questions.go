package plannerhost

import (
	"context"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// A client's input-request becomes Decisions exactly as the ask host tool's
// questions do: the same cards, answerable in the UI and over HTTP. The
// question holds its room open until it settles, since the room keeps the
// waiter that carries the answer back.

// openQuestion is an input-request in the room's hands.
type openQuestion struct {
	r       *room.Room
	request string // the room's request id of the cards
	release func()
}

type openQuestions struct {
	mu sync.Mutex
	m  map[*agentconn.Question]*openQuestion
}

func (h *Host) Ask(ctx context.Context, q *agentconn.Question) error {
	// The agent connection decoded and checked the call; the room checks
	// it again as the link will show it (previews joined or not).
	call, restore := h.questionFor(q.Document, room.QuestionCallOf(q.Input))
	ch, err := h.docs.Document(ctx, q.Document)
	if err != nil {
		return toolError(err)
	}
	r, release, err := h.hub.Acquire(ctx, ch)
	if err != nil {
		return err
	}
	var block *room.BlockRef
	if q.Block != nil {
		block = &room.BlockRef{Index: q.Block.Index, Digest: q.Block.Digest}
	}
	oq := &openQuestion{r: r, release: release}
	// The room settles in its own goroutine, possibly before Ask returns:
	// the entry is in the map first.
	h.questions.mu.Lock()
	if h.questions.m == nil {
		h.questions.m = map[*agentconn.Question]*openQuestion{}
	}
	h.questions.m[q] = oq
	h.questions.mu.Unlock()
	settle := func(o room.Outcome) {
		h.questions.mu.Lock()
		request := oq.request
		h.questions.mu.Unlock()
		h.questions.settled(q)
		h.answered(q, request, o, answerOf(restore(o)))
	}
	var request string
	if isPermission(call) {
		request, err = r.AskApart(ctx, call, settle)
	} else {
		request, err = r.Ask(ctx, call, block, settle)
	}
	if err != nil {
		h.questions.settled(q)
		return toolError(err)
	}
	h.questions.mu.Lock()
	oq.request = request
	h.questions.mu.Unlock()
	// Chat says the Planner waits on Decisions.
	r.Notice(ctx, room.AskedLine(call))
	q.SetDecisions(request) // kept with a resumable link's hold, and reopened by Reopen
	return nil
}

// PermissionHeader is the header of a question asking the people's
// permission for one of the Planner's own actions, such as an ACP agent's
// command or file write (docs/acp.md): a questionnaire of that one
// question. Its card is about no passage of the plan, so it is not placed
// there (room.AskApart): a <Decision> line would move the plan's revision
// and make stale the edit the Planner read the plan for.
const PermissionHeader = "Permission"

func isPermission(c room.QuestionCall) bool {
	return c.Method == room.MethodQuestionnaire && len(c.Questions) == 1 && c.Questions[0].Header == PermissionHeader
}

// Withdraw withdraws the cards of a question agentconn gave up on.
func (h *Host) Withdraw(q *agentconn.Question) {
	h.questions.mu.Lock()
	oq := h.questions.m[q]
	h.questions.mu.Unlock()
	if oq == nil {
		return
	}
	if err := oq.r.Withdraw(context.Background(), oq.request); err != nil {
		h.log.Error("withdraw decisions", "channel", q.Document, "request", q.Request, "err", err)
	}
	// Withdraw settles the cards, which releases the room; a call that had
	// settled already released it then.
}

// settled forgets q and lets its room go.
func (qs *openQuestions) settled(q *agentconn.Question) {
	qs.mu.Lock()
	oq := qs.m[q]
	delete(qs.m, q)
	qs.mu.Unlock()
	if oq != nil {
		oq.release()
	}
}

// answerOf is a room's outcome in agentconn's terms; agentconn shapes the
// wire value from it.
func answerOf(o room.Outcome) wire.Answer {
	a := wire.Answer{Status: o.Status, Message: o.Message}
	switch v := o.Value.(type) {
	case room.QuestionnaireValue:
		a.Answers = make([]wire.QuestionAnswer, len(v.Answers))
		for i, qa := range v.Answers {
			a.Answers[i] = wire.QuestionAnswer{QuestionIndex: qa.QuestionIndex, Question: qa.Question,
				Kind: qa.Kind, Answer: qa.Answer, Selected: qa.Selected}
			if qa.Preview != nil {
				a.Answers[i].Preview = *qa.Preview
			}
		}
	case bool:
		a.Yes = v
	case *string:
		a.Choice = v
	case string:
		a.Text = v
	}
	return a
}
