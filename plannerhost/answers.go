package plannerhost

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// An answer nobody waits on any more (spec/agent-connection.md, "After a
// server restart", "An answer its client is never given"): a Decision that
// outlived the process that asked it and that no kept question waits on
// again, or an answer held for a client that came back without the question
// (nothing to resume, or a resume without its session). It reaches the
// Planner once, as a turn of its own that names the question, the option
// chosen and who chose it, started when a Planner is attached and idle.
// Exactly one of the two paths delivers an answer: the room reports a call
// only when nobody waited on it (room.OnUnawaited), agentconn only an answer
// it held and let go (agentconn.Undelivered).

// pendingAnswers are the answers still to reach each document's Planner,
// by the room's request id of their Decisions, oldest first. They are kept in
// memory: a restart before a Planner attaches loses them.
type pendingAnswers struct {
	mu sync.Mutex
	m  map[string][]string
}

var _ agentconn.Undelivered = (*Host)(nil)

// AnswerUndelivered is an answer agentconn held for a client that will never
// be given it.
func (h *Host) AnswerUndelivered(documentID, decisions string) {
	go h.answerUnawaited(documentID, decisions) // never on the link's own goroutine
}

// answerUnawaited queues the answer of the room's call request for a turn of
// its own, and starts it if the Planner can take it now.
func (h *Host) answerUnawaited(documentID, request string) {
	h.answers.mu.Lock()
	if h.answers.m == nil {
		h.answers.m = map[string][]string{}
	}
	h.answers.m[documentID] = append(h.answers.m[documentID], request)
	h.answers.mu.Unlock()
	h.log.Info("an answer nobody waits on goes to the Planner", "channel", documentID, "request", request)
	h.flushAnswers(documentID)
}

// flushAnswers starts a turn for the oldest answer still to reach the
// document's Planner, when one is attached and idle. The next goes once that
// turn's reply ends, or when the Planner next attaches.
func (h *Host) flushAnswers(documentID string) {
	h.answers.mu.Lock()
	queue := h.answers.m[documentID]
	if len(queue) == 0 {
		h.answers.mu.Unlock()
		return
	}
	request := queue[0]
	h.answers.m[documentID] = queue[1:]
	h.answers.mu.Unlock()

	ctx := context.Background()
	started, err := h.answerTurn(ctx, documentID, request)
	if err != nil {
		h.log.Error("give the Planner an answer", "channel", documentID, "request", request, "err", err)
	}
	if started || err != nil {
		return
	}
	// Not now: first in line for the next try.
	h.answers.mu.Lock()
	h.answers.m[documentID] = append([]string{request}, h.answers.m[documentID]...)
	h.answers.mu.Unlock()
}

// answerTurn starts the turn that gives the Planner the answer of the call
// request. It reports false, without an error, when no Planner can take a
// turn now; an error drops the answer.
func (h *Host) answerTurn(ctx context.Context, documentID, request string) (bool, error) {
	if st := h.agent.Status(documentID); st.State != agentconn.PlannerAttached || h.agent.Refusal(ctx, documentID) != nil {
		return false, nil
	}
	rc, err := h.docs.Document(ctx, documentID)
	if errors.Is(err, ErrNotFound) {
		return false, errors.New("the document is gone")
	}
	if err != nil {
		return false, err
	}
	if rc.Archived() {
		return false, errors.New("the document is archived")
	}
	r, release, err := h.hub.Acquire(ctx, rc)
	if err != nil {
		return false, err
	}
	answered, ok := r.AnsweredCall(request)
	if !ok {
		release()
		return false, errors.New("its Decisions have no answer")
	}
	req, err := h.turnRequest(ctx, rc, room.Message{Text: answerPrompt(answered)})
	if err != nil {
		release()
		return false, err
	}
	fellBack := h.applyModelChoice(documentID, &req)
	sink := &replySink{h: h, document: documentID, ready: make(chan struct{})}
	req.Sink = sink
	h.replies.Add(1)
	if err := h.agent.StartTurn(ctx, documentID, req); err != nil {
		h.replies.Done()
		release()
		var tr *agentconn.TurnRefused
		if errors.As(err, &tr) || errors.Is(err, agentconn.ErrNotAttached) {
			return false, nil // busy, or gone meanwhile: tried again later
		}
		return false, err
	}
	defer close(sink.ready)
	fellBack(ctx)
	author := h.agent.Status(documentID).Login
	if author == "" {
		author = h.login
	}
	reply, err := r.StartReply(ctx, author)
	if err != nil {
		release()
		h.log.Error("start the Planner's reply", "channel", documentID, "err", err)
		return true, nil
	}
	sink.reply, sink.release = reply, release
	return true, nil
}

// answerPrompt names the question, the option chosen and who chose it.
func answerPrompt(ans room.Answered) string {
	var b strings.Builder
	b.WriteString("A question you asked as Decisions was answered after the session that asked it ended, so nobody waits on it any more. Here is the answer, as a turn of its own:\n")
	for _, c := range ans.Cards {
		b.WriteString("\nQuestion: " + cardQuestion(ans.Call, c.Index) + "\n")
		switch {
		case c.Status != room.DecisionDecided || c.Answer == nil:
			b.WriteString("Not answered (" + c.Status + ").\n")
		default:
			b.WriteString("Answer: " + cardAnswer(*c.Answer) + "\n")
			if c.AnsweredBy != "" {
				b.WriteString("Chosen by @" + c.AnsweredBy + ".\n")
			}
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func cardQuestion(call room.QuestionCall, index int) string {
	if call.Method == room.MethodQuestionnaire {
		if index >= 0 && index < len(call.Questions) {
			return call.Questions[index].Question
		}
		return ""
	}
	if call.Message != "" {
		return call.Title + " (" + call.Message + ")"
	}
	return call.Title
}

func cardAnswer(a room.CardAnswer) string {
	switch {
	case a.Yes != nil && *a.Yes:
		return "yes"
	case a.Yes != nil:
		return "no"
	case a.Choice != nil:
		return *a.Choice
	case len(a.Labels) > 0:
		return strings.Join(a.Labels, ", ")
	}
	return a.Text
}

// answered hands q the room's outcome of its Decisions, the call request. An
// answer q no longer takes (its client let it go as the answer came) is one
// nobody waits on.
func (h *Host) answered(q *agentconn.Question, request string, o room.Outcome, answer wire.Answer) {
	err := q.Answer(answer)
	switch {
	case errors.Is(err, agentconn.ErrQuestionClosed):
		if o.Status == room.StatusAnswered && request != "" {
			h.answerUnawaited(q.Document, request)
		}
	case err != nil:
		h.log.Error("answer input-request", "channel", q.Document, "request", q.Request, "err", err)
	}
}
