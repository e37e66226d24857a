package room

// Await waits again on a question call whose cards are still open, as a
// process does after a restart for the Decisions an agent client still
// waits on: settle receives the call's outcome, once. It reports false when
// the call is no longer open or already has a waiter.
func (r *Room) Await(request string, settle Settle) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cards.calls[request]; !ok {
		return false
	}
	if _, ok := r.cards.waiters[request]; ok {
		return false
	}
	r.cards.waiters[request] = settle
	return true
}

// OnUnawaited sets what hears of a question call answered while nobody
// waited on it: a call whose Decisions outlived the process that asked them
// and that no one waits on again (spec/agent-connection.md, "After a server
// restart": its answer reaches the Planner as a turn of its own). Set it
// before rooms open. fn runs in its own goroutine, once per call answered.
func (h *Hub) OnUnawaited(fn func(channelID, request string)) {
	h.unawaited = fn
}

// unawaitedLocked reports an answer nobody waited on.
func (r *Room) unawaitedLocked(request string, o Outcome) {
	if o.Status != StatusAnswered || r.hub.unawaited == nil {
		return
	}
	fn, ch := r.hub.unawaited, r.channelID
	go fn(ch, request)
}

// Answered is a settled question call as the people answered it: each card
// with its question, answer and who gave it.
type Answered struct {
	Call  QuestionCall
	Cards []Decision
}

// AnsweredCall returns the cards of the question call request, in order. It
// reports false when the call has no card answered.
func (r *Room) AnsweredCall(request string) (Answered, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out Answered
	for _, c := range r.cards.cards {
		if c.Request != request {
			continue
		}
		if len(out.Cards) == 0 {
			call, err := ParseQuestionCall(c.Call)
			if err != nil {
				return Answered{}, false
			}
			out.Call = call
		}
		out.Cards = append(out.Cards, c)
	}
	answered := false
	for _, c := range out.Cards {
		answered = answered || c.Status == DecisionDecided
	}
	return out, answered
}
