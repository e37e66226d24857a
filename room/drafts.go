package room

// The shared live draft of a Decision card (decision:draft): while a card
// waits for an answer, the answer a tab is composing (the options it
// picked, the text it writes) and where its person is on the card are
// relayed to every other tab on the document, as comment:typing is. Nothing
// is stored; any tab can Submit the answer with decision:answer, which
// records who decided.

// DecisionDraft is an answer being composed on a card.
type DecisionDraft struct {
	Labels  []string `json:"labels,omitempty"`  // options picked (questionnaire)
	Choice  *string  `json:"choice,omitempty"`  // the choice picked (select)
	Text    string   `json:"text,omitempty"`    // the written answer
	Writing bool     `json:"writing,omitempty"` // writing their own answer instead of picking
}

// Where on a card a person is: its options, its written answer, or nowhere
// (they left the card).
const (
	DraftFieldOptions = "options"
	DraftFieldText    = "text"
)

// maxDraftBytes bounds a draft's text and labels together.
const maxDraftBytes = 64 << 10

type (
	inDecisionDraft struct {
		Type     string         `json:"type"`
		ID       string         `json:"id,omitempty"`
		Decision string         `json:"decision"`
		Field    string         `json:"field"`
		Draft    *DecisionDraft `json:"draft,omitempty"`
	}
	msgDecisionDraft struct {
		Type     string         `json:"type"` // decision:draft
		Decision string         `json:"decision"`
		Tab      string         `json:"tab"` // the sending tab, so two tabs of one person tell apart
		Login    string         `json:"login"`
		Name     string         `json:"name,omitempty"`
		Field    string         `json:"field"`
		Draft    *DecisionDraft `json:"draft,omitempty"`
	}
)

// relayDraft sends m's draft of a waiting card to every other tab.
func (m *Member) relayDraft(in inDecisionDraft) error {
	switch in.Field {
	case "", DraftFieldOptions, DraftFieldText:
	default:
		return errorf(CodeMalformed, "A draft's field is %q, %q or empty, not %q.", DraftFieldOptions, DraftFieldText, in.Field)
	}
	if d := in.Draft; d != nil {
		size := len(d.Text)
		for _, l := range d.Labels {
			size += len(l)
		}
		if d.Choice != nil {
			size += len(*d.Choice)
		}
		if size > maxDraftBytes {
			return errorf(CodeDraftTooLarge, "A draft holds at most %d bytes of text; this one has %d.", maxDraftBytes, size)
		}
	}
	r := m.room
	r.mu.Lock()
	defer r.mu.Unlock()
	card, err := r.cardLocked(in.Decision)
	if err != nil {
		return err
	}
	if !waiting(card.Status) {
		return errorf(CodeDecisionClosed, "This decision is already %s; there is no answer to draft.", card.Status)
	}
	frame := encode(msgDecisionDraft{Type: "decision:draft", Decision: card.ID, Tab: m.tab, Login: m.who.Login,
		Name: m.who.Name, Field: in.Field, Draft: in.Draft})
	for o := range r.members {
		if o != m {
			o.conn.Send(frame)
		}
	}
	return nil
}
