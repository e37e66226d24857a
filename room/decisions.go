package room

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Decision card statuses, the specification's.
const (
	DecisionOpen      = "open"
	DecisionDecided   = "decided"
	DecisionReopened  = "reopened"  // decided, then opened again for a new answer
	DecisionDiscarded = "discarded" // a member set it aside, answered or not
	DecisionExpired   = "expired"   // closed without an answer: the Planner withdrew it, its session ended, or another card of its call was discarded
)

// waiting reports whether a card takes an answer.
func waiting(status string) bool { return status == DecisionOpen || status == DecisionReopened }

// Decision is one card: one question of a question call, placed in the plan
// by a <Decision id="..." /> line that only the server writes.
type Decision struct {
	ID         string          `json:"id"`
	ChannelID  string          `json:"-"`
	Request    string          `json:"request"` // the question call the card belongs to
	Index      int             `json:"index"`   // the question's position in its call
	Call       json.RawMessage `json:"call"`    // the whole call, as asked
	Status     string          `json:"status"`
	Answer     *CardAnswer     `json:"answer,omitempty"`
	AnsweredBy string          `json:"answeredBy,omitempty"`
	Block      int             `json:"block"` // the block it follows, -1 when placed at the end, NotInPlan when not placed
	CreatedAt  int64           `json:"createdAt"`
	UpdatedAt  int64           `json:"updatedAt"`
	// Previous is the answers the card had before each time it was
	// reopened, oldest first.
	Previous    []PreviousAnswer `json:"previous,omitempty"`
	DiscardedBy string           `json:"discardedBy,omitempty"`
}

// PreviousAnswer is an answer a card had until someone reopened it.
type PreviousAnswer struct {
	Answer     CardAnswer `json:"answer"`
	AnsweredBy string     `json:"answeredBy,omitempty"`
	DecidedAt  int64      `json:"decidedAt"`
	ReopenedBy string     `json:"reopenedBy,omitempty"`
	ReopenedAt int64      `json:"reopenedAt"`
}

// CardAnswer is what a member submits for one card:
//
//	questionnaire: {"labels": ["..."]} or {"text": "..."} (labels of offered or added options, or a written answer)
//	confirm:       {"yes": true}
//	select:        {"choice": "..."} or {"text": "..."} (a written answer instead of a choice)
//	input, editor: {"text": "..."}
type CardAnswer struct {
	Labels []string `json:"labels,omitempty"`
	Text   string   `json:"text,omitempty"`
	Yes    *bool    `json:"yes,omitempty"`
	Choice *string  `json:"choice,omitempty"`
}

// NotInPlan is the Block of a card asked with AskApart: it has no
// <Decision id="..." /> line in the plan.
const NotInPlan = -2

// Settle receives a question call's outcome once, when it is answered,
// cancelled or withdrawn.
type Settle func(Outcome)

type decisions struct {
	cards   []Decision        // every card, oldest first
	calls   map[string]askRec // open calls by request
	waiters map[string]Settle
}

type askRec struct {
	call QuestionCall
	ids  []string
}

func (d *decisions) load(ctx context.Context, r *Room) error {
	cards, err := r.hub.persist.Decisions(ctx, r.channelID)
	if err != nil {
		return err
	}
	d.cards = cards
	d.calls = map[string]askRec{}
	d.waiters = map[string]Settle{}
	for _, c := range cards {
		if c.Status != DecisionOpen {
			continue
		}
		rec, ok := d.calls[c.Request]
		if !ok {
			call, err := ParseQuestionCall(c.Call)
			if err != nil {
				return fmt.Errorf("decision %s: %w", c.ID, err)
			}
			rec.call = call
		}
		rec.ids = append(rec.ids, c.ID)
		d.calls[c.Request] = rec
	}
	return nil
}

// Ask puts a question call to the people as Decisions: a card per question,
// placed after the named block (or at the end), stored together with the
// plan change that places them. settle receives the outcome.
func (r *Room) Ask(ctx context.Context, call QuestionCall, block *BlockRef, settle Settle) (string, error) {
	return r.ask(ctx, call, block, true, settle)
}

// AskApart puts a question call to the people as Decisions that are not
// placed in the plan: a question about the Planner's own actions (an
// agent's permission to run a command), not about a passage. The cards
// show in Decisions and Chat only; the plan and its revision do not change,
// so an edit the Planner prepared before asking is not made stale.
func (r *Room) AskApart(ctx context.Context, call QuestionCall, settle Settle) (string, error) {
	return r.ask(ctx, call, nil, false, settle)
}

func (r *Room) ask(ctx context.Context, call QuestionCall, block *BlockRef, inPlan bool, settle Settle) (string, error) {
	if err := call.Validate(); err != nil {
		return "", err
	}
	raw, err := call.MarshalJSON()
	if err != nil {
		return "", err
	}
	defer r.checkpointIfDue(ctx) // after the lock is let go
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writableLocked(); err != nil {
		return "", err
	}
	after := -1
	switch {
	case !inPlan:
		after = NotInPlan
	case block != nil:
		after = PlaceAfter(r.plan.blocksLocked(), block.Index, block.Digest)
	}
	request := newID()
	n := 1
	if call.Method == MethodQuestionnaire {
		n = len(call.Questions)
	}
	now := r.hub.now().UnixMilli()
	cards := make([]Decision, n)
	ids := make([]string, n)
	for i := range cards {
		ids[i] = "d" + newID()
		cards[i] = Decision{ID: ids[i], ChannelID: r.channelID, Request: request, Index: i, Call: raw,
			Status: DecisionOpen, Block: after, CreatedAt: now, UpdatedAt: now}
	}
	var placement []Update
	text := r.plan.text
	if inPlan {
		text = InsertDecisionMarks(text, after, ids)
		u, err := r.serverUpdateLocked(text)
		if err != nil {
			return "", err
		}
		placement = []Update{u}
	}
	if err := r.hub.persist.SaveDecisions(ctx, r.channelID, cards, placement); err != nil {
		return "", fmt.Errorf("save decisions: %w", err)
	}
	r.cards.cards = append(r.cards.cards, cards...)
	r.cards.calls[request] = askRec{call: call, ids: ids}
	if settle != nil {
		r.cards.waiters[request] = settle
	}
	if inPlan {
		r.plan.acceptLocked(r, placement, text, UTF16Len(text))
	}
	for _, c := range cards {
		r.broadcastLocked(msgDecision{Type: "decision:update", Decision: c})
	}
	return request, nil
}

// AskedLine is Chat's line for a question call the Planner asked: that it
// waits on Decisions, and what it asked, in at most askedNamed headings of
// askedHeading runes each.
func AskedLine(call QuestionCall) string {
	var names []string
	if call.Method == MethodQuestionnaire {
		for _, q := range call.Questions {
			names = append(names, q.Question)
		}
	} else {
		names = []string{call.Title}
	}
	quoted := make([]string, 0, askedNamed)
	for _, n := range names[:min(len(names), askedNamed)] {
		quoted = append(quoted, "“"+ClipLine(n, askedHeading)+"”")
	}
	list := strings.Join(quoted, ", ")
	if more := len(names) - len(quoted); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	if len(names) == 1 {
		return "The Planner asked a question and waits for an answer in Decisions: " + list + "."
	}
	return fmt.Sprintf("The Planner asked %d questions and waits for answers in Decisions: %s.", len(names), list)
}

const (
	askedNamed   = 3  // questions a Chat line names
	askedHeading = 80 // runes of each it shows
)

// ClipLine is s's first non-blank line, trimmed, at most n runes (an
// ellipsis ends a cut one).
func ClipLine(s string, n int) string {
	line := ""
	for l := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	if r := []rune(line); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return line
}

// Answer records a member's answer to an open or reopened card. An open
// card's call settles as answered once every card of it has an answer; a
// reopened card's call was settled long ago, so the new answer reaches the
// Planner as a Chat notice, read with its next turn.
func (r *Room) Answer(ctx context.Context, who Identity, id string, a CardAnswer) (Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	card, err := r.cardLocked(id)
	if err != nil {
		return Decision{}, err
	}
	if card.Status == DecisionReopened {
		return r.answerReopenedLocked(ctx, who, card, a)
	}
	card, rec, err := r.openCardLocked(id)
	if err != nil {
		return Decision{}, err
	}
	reply, err := checkCardAnswer(rec.call, card.Index, a)
	if err != nil {
		return Decision{}, err
	}
	card.Status, card.Answer, card.AnsweredBy = DecisionDecided, &a, who.Login
	changed := []Decision{card}

	var outcome *Outcome
	if picks, complete := r.cards.replyLocked(rec, card); complete {
		reply.Picks = picks
		o, err := rec.call.Answered(reply)
		if err != nil {
			return Decision{}, err
		}
		outcome = &o
	}
	if err := r.saveCardsLocked(ctx, changed); err != nil {
		return Decision{}, err
	}
	if outcome != nil {
		r.settleLocked(card.Request, *outcome)
	}
	return changed[0], nil
}

func (r *Room) answerReopenedLocked(ctx context.Context, who Identity, card Decision, a CardAnswer) (Decision, error) {
	call, err := ParseQuestionCall(card.Call)
	if err != nil {
		return Decision{}, fmt.Errorf("decision %s: %w", card.ID, err)
	}
	if _, err := checkCardAnswer(call, card.Index, a); err != nil {
		return Decision{}, err
	}
	card.Status, card.Answer, card.AnsweredBy = DecisionDecided, &a, who.Login
	changed := []Decision{card}
	if err := r.saveCardsLocked(ctx, changed); err != nil {
		return Decision{}, err
	}
	text := fmt.Sprintf("@%s answered the reopened decision “%s”: %s", who.Login, ClipLine(cardQuestion(call, card.Index), askedHeading), ClipLine(answerText(a), askedHeading))
	if n := len(card.Previous); n > 0 {
		text += fmt.Sprintf(" (before: %s)", ClipLine(answerText(card.Previous[n-1].Answer), askedHeading))
	}
	r.noticeLocked(ctx, text+".")
	return changed[0], nil
}

// CancelDecision is DiscardDecision for a card that is still open: the name
// the decision:cancel message and the cancel request keep.
func (r *Room) CancelDecision(ctx context.Context, who Identity, id string) (Decision, error) {
	r.mu.Lock()
	card, err := r.cardLocked(id)
	r.mu.Unlock()
	if err != nil {
		return Decision{}, err
	}
	if !waiting(card.Status) {
		return Decision{}, errorf(CodeDecisionClosed, "This decision is already %s; only an open one can be cancelled.", card.Status)
	}
	return r.DiscardDecision(ctx, who, id)
}

// DiscardDecision is a member setting a card aside, open, reopened or
// decided. A card whose call the Planner still waits on settles the call
// as cancelled, keeping a questionnaire's answered questions, and the
// call's other open cards expire. A decided card keeps its answer, shown
// as the one discarded. For any other card Chat says so, for the people
// and the Planner's next turn.
func (r *Room) DiscardDecision(ctx context.Context, who Identity, id string) (Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	card, err := r.cardLocked(id)
	if err != nil {
		return Decision{}, err
	}
	if card.Status == DecisionDiscarded || card.Status == DecisionExpired {
		return Decision{}, errorf(CodeDecisionClosed, "This decision is already %s; there is nothing to discard.", card.Status)
	}
	rec, waited := r.cards.calls[card.Request]
	waited = waited && card.Status == DecisionOpen
	was := card.Status
	card.Status, card.DiscardedBy = DecisionDiscarded, who.Login
	changed := []Decision{card}
	var outcome Outcome
	if waited {
		changed = append(changed, r.cards.othersOpenLocked(rec, card.ID, DecisionExpired)...)
		if outcome, err = rec.call.Cancelled(r.cards.answeredPicksLocked(rec)); err != nil {
			return Decision{}, err
		}
	}
	if err := r.saveCardsLocked(ctx, changed); err != nil {
		return Decision{}, err
	}
	if waited {
		r.settleLocked(card.Request, outcome)
	}
	question := card.ID
	if call, err := ParseQuestionCall(card.Call); err == nil {
		question = ClipLine(cardQuestion(call, card.Index), askedHeading)
	}
	text := fmt.Sprintf("@%s discarded the decision “%s”", who.Login, question)
	if was == DecisionDecided && card.Answer != nil {
		text += fmt.Sprintf(", answered %s before; set its answer aside.", ClipLine(answerText(*card.Answer), askedHeading))
	} else {
		text += " without an answer."
	}
	// The Planner still waiting on the card learns of it from its
	// request's cancelled result; a card nobody waits on, from Chat.
	if !waited {
		r.noticeLocked(ctx, text)
	}
	return changed[0], nil
}

// ReopenDecision opens a decided card again for a new answer: its answer
// becomes its latest previous one, shown under it, and Chat says so, for
// the people and the Planner's next turn. A card asked apart from the plan
// (a permission the Planner already acted on) cannot be reopened.
func (r *Room) ReopenDecision(ctx context.Context, who Identity, id string) (Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	card, err := r.cardLocked(id)
	if err != nil {
		return Decision{}, err
	}
	switch {
	case waiting(card.Status):
		return Decision{}, errorf(CodeDecisionOpen, "This decision is still waiting for an answer; answer it instead of reopening it.")
	case card.Status != DecisionDecided || card.Answer == nil:
		return Decision{}, errorf(CodeDecisionClosed, "This decision is %s; only a decided one can be reopened.", card.Status)
	case card.Block == NotInPlan:
		return Decision{}, errorf(CodeDecisionClosed, "This was a permission the Planner asked for and acted on; it cannot be reopened. Ask the Planner in Chat instead.")
	}
	now := r.hub.now().UnixMilli()
	prev := PreviousAnswer{Answer: *card.Answer, AnsweredBy: card.AnsweredBy, DecidedAt: card.UpdatedAt, ReopenedBy: who.Login, ReopenedAt: now}
	card.Previous = append(append([]PreviousAnswer(nil), card.Previous...), prev)
	card.Status, card.Answer, card.AnsweredBy = DecisionReopened, nil, ""
	changed := []Decision{card}
	if err := r.saveCardsLocked(ctx, changed); err != nil {
		return Decision{}, err
	}
	question := card.ID
	if call, err := ParseQuestionCall(card.Call); err == nil {
		question = ClipLine(cardQuestion(call, card.Index), askedHeading)
	}
	r.noticeLocked(ctx, fmt.Sprintf("@%s reopened the decision “%s” (it was: %s); it waits for a new answer in Decisions.",
		who.Login, question, ClipLine(answerText(prev.Answer), askedHeading)))
	return changed[0], nil
}

// Withdraw closes a call's open cards without an answer: the Planner sent
// input-cancel, its session ended or its connection closed. The call settles
// as cancelled with the questionnaire answers given so far.
func (r *Room) Withdraw(ctx context.Context, request string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.cards.calls[request]
	if !ok {
		return nil // already settled
	}
	changed := r.cards.othersOpenLocked(rec, "", DecisionExpired)
	outcome, err := rec.call.Cancelled(r.cards.answeredPicksLocked(rec))
	if err != nil {
		return err
	}
	if err := r.saveCardsLocked(ctx, changed); err != nil {
		return err
	}
	r.settleLocked(request, outcome)
	return nil
}

// Decisions returns every card, oldest first.
func (r *Room) Decisions() []Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Decision(nil), r.cards.cards...)
}

// OpenRequests lists the calls still waiting for an answer.
func (r *Room) OpenRequests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.cards.calls))
	for req := range r.cards.calls {
		out = append(out, req)
	}
	return out
}

// cardLocked finds a card of a document that can change.
func (r *Room) cardLocked(id string) (Decision, error) {
	if err := r.writableLocked(); err != nil {
		return Decision{}, err
	}
	for _, c := range r.cards.cards {
		if c.ID == id {
			return c, nil
		}
	}
	return Decision{}, errorf(CodeNotFound, "This document has no decision %q.", id)
}

// noticeLocked posts a Chat notice; a failure is logged, the change stands.
func (r *Room) noticeLocked(ctx context.Context, text string) {
	if _, err := r.postLocked(ctx, Message{Role: RoleSystem, Text: text}); err != nil {
		r.hub.logf(r).Error("post notice", "err", err)
	}
}

func (r *Room) openCardLocked(id string) (Decision, askRec, error) {
	if err := r.writableLocked(); err != nil {
		return Decision{}, askRec{}, err
	}
	for _, c := range r.cards.cards {
		if c.ID != id {
			continue
		}
		rec, ok := r.cards.calls[c.Request]
		if c.Status != DecisionOpen || !ok {
			return Decision{}, askRec{}, errorf(CodeDecisionClosed, "This decision is already %s; it takes no more answers.", c.Status)
		}
		return c, rec, nil
	}
	return Decision{}, askRec{}, errorf(CodeNotFound, "This document has no decision %q.", id)
}

// saveCardsLocked stores changed cards, then publishes them.
func (r *Room) saveCardsLocked(ctx context.Context, changed []Decision) error {
	now := r.hub.now().UnixMilli()
	for i := range changed {
		changed[i].UpdatedAt = now
	}
	if err := r.hub.persist.SaveDecisions(ctx, r.channelID, changed, nil); err != nil {
		return fmt.Errorf("save decisions: %w", err)
	}
	for _, c := range changed {
		for i := range r.cards.cards {
			if r.cards.cards[i].ID == c.ID {
				r.cards.cards[i] = c
			}
		}
		r.broadcastLocked(msgDecision{Type: "decision:update", Decision: c})
	}
	return nil
}

func (r *Room) settleLocked(request string, o Outcome) {
	delete(r.cards.calls, request)
	settle, ok := r.cards.waiters[request]
	delete(r.cards.waiters, request)
	if ok {
		// The waiter may call back into the room: not under its lock.
		go settle(o)
		return
	}
	r.unawaitedLocked(request, o)
}

// replyLocked collects the picks of a call whose card was just answered,
// and reports whether every card now has its answer.
func (d *decisions) replyLocked(rec askRec, answered Decision) ([]Pick, bool) {
	var picks []Pick
	for _, id := range rec.ids {
		c := answered
		if id != answered.ID {
			c = d.card(id)
		}
		if c.Status != DecisionDecided {
			return nil, false
		}
		if c.Answer != nil {
			picks = append(picks, Pick{QuestionIndex: c.Index, Labels: c.Answer.Labels, Text: c.Answer.Text})
		}
	}
	return picks, true
}

func (d *decisions) answeredPicksLocked(rec askRec) []Pick {
	picks := []Pick{}
	if rec.call.Method != MethodQuestionnaire {
		return nil
	}
	for _, id := range rec.ids {
		if c := d.card(id); c.Status == DecisionDecided && c.Answer != nil {
			picks = append(picks, Pick{QuestionIndex: c.Index, Labels: c.Answer.Labels, Text: c.Answer.Text})
		}
	}
	return picks
}

func (d *decisions) othersOpenLocked(rec askRec, except, status string) []Decision {
	var out []Decision
	for _, id := range rec.ids {
		if c := d.card(id); id != except && c.Status == DecisionOpen {
			c.Status = status
			out = append(out, c)
		}
	}
	return out
}

func (d *decisions) card(id string) Decision {
	for _, c := range d.cards {
		if c.ID == id {
			return c
		}
	}
	return Decision{}
}

// checkCardAnswer checks a member's answer against the card's question and
// returns the non-questionnaire part of the call's reply.
func checkCardAnswer(call QuestionCall, index int, a CardAnswer) (Reply, error) {
	switch call.Method {
	case MethodQuestionnaire:
		if (len(a.Labels) == 0) == (a.Text == "") || a.Yes != nil || a.Choice != nil {
			return Reply{}, errorf(CodeInvalidAnswer, `Answer a question with {"labels": [...]} or {"text": "..."}.`)
		}
		q := call.Questions[index]
		if !q.MultiSelect && len(a.Labels) > 1 {
			return Reply{}, errorf(CodeInvalidAnswer, "This question takes one option.")
		}
		// Shaping the answer checks labels, previews and kinds.
		if _, err := (QuestionCall{Method: MethodQuestionnaire, Questions: call.Questions}).answers(
			[]Pick{{QuestionIndex: index, Labels: a.Labels, Text: a.Text}}); err != nil {
			return Reply{}, err
		}
		return Reply{}, nil
	case MethodConfirm:
		if a.Yes == nil || len(a.Labels) > 0 || a.Text != "" || a.Choice != nil {
			return Reply{}, errorf(CodeInvalidAnswer, `Answer a confirmation with {"yes": true} or {"yes": false}.`)
		}
		return Reply{Yes: *a.Yes}, nil
	case MethodSelect:
		if (a.Choice == nil) == (a.Text == "") || len(a.Labels) > 0 || a.Yes != nil {
			return Reply{}, errorf(CodeInvalidAnswer, `Answer a choice with {"choice": "..."} or write one with {"text": "..."}.`)
		}
		if a.Choice != nil && !contains(call.Choices, *a.Choice) {
			return Reply{}, errorf(CodeInvalidAnswer, "%q is not one of the choices.", *a.Choice)
		}
		return Reply{Choice: a.Choice}, nil
	case MethodInput, MethodEditor:
		if len(a.Labels) > 0 || a.Yes != nil || a.Choice != nil {
			return Reply{}, errorf(CodeInvalidAnswer, `Answer with {"text": "..."}.`)
		}
		return Reply{Text: a.Text}, nil
	}
	return Reply{}, errorf(CodeInvalidQuestion, "method %q is not a question.", call.Method)
}
