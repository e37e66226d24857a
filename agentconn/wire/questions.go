package wire

import (
	"errors"
	"fmt"
	"strings"
)

// Input is one question call of an input-request ("Questions"). Like
// StreamPart it is flat, and inputKeys says which fields each method has.
type Input struct {
	Method      string               `json:"method"`
	Params      *QuestionnaireParams `json:"params"`
	Title       string               `json:"title"`
	Message     string               `json:"message"`
	Choices     []string             `json:"choices"`
	Placeholder string               `json:"placeholder"`
	Initial     string               `json:"initial"`
}

// Question methods.
const (
	MethodQuestionnaire = "questionnaire"
	MethodConfirm       = "confirm"
	MethodSelect        = "select"
	MethodInput         = "input"
	MethodEditor        = "editor"
)

var inputKeys = parseVariantTable(map[string]string{
	MethodQuestionnaire: "params",
	MethodConfirm:       "title message",
	MethodSelect:        "title choices",
	MethodInput:         "title placeholder?",
	MethodEditor:        "title initial?",
})

func (Input) variantKeys() (string, map[string][]variantKey) { return "method", inputKeys }

// MarshalJSON writes exactly the fields of in's method.
func (in Input) MarshalJSON() ([]byte, error) { return marshalVariant(in) }

// QuestionnaireParams holds a questionnaire's questions.
type QuestionnaireParams struct {
	Questions []QuestionItem `json:"questions"`
}

// QuestionItem is one question of a questionnaire.
type QuestionItem struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
}

// Option is one offered answer of a QuestionItem.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Preview     string `json:"preview,omitempty"`
}

func (in *Input) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	switch in.Method {
	case MethodQuestionnaire:
		qs := in.Params.Questions
		if len(qs) < 1 || len(qs) > MaxQuestions {
			add(fmt.Errorf("input.params.questions has %d questions; a questionnaire has 1 to %d", len(qs), MaxQuestions))
		}
		for i, q := range qs {
			add(checkNote(fmt.Sprintf("input.params.questions[%d].question", i), q.Question))
			add(checkShort(fmt.Sprintf("input.params.questions[%d].header", i), q.Header))
			if len(q.Options) > MaxOptions {
				add(fmt.Errorf("input.params.questions[%d] has %d options; at most %d", i, len(q.Options), MaxOptions))
			}
			for j, o := range q.Options {
				at := fmt.Sprintf("input.params.questions[%d].options[%d]", i, j)
				add(checkNote(at+".label", o.Label))
				add(checkNote(at+".description", o.Description))
				add(checkMax(at+".preview", o.Preview, MaxPreviewChars))
			}
		}
	case MethodConfirm:
		add(checkNote("input.title", in.Title))
		add(checkNote("input.message", in.Message))
	case MethodSelect:
		add(checkNote("input.title", in.Title))
		if len(in.Choices) > MaxChoices {
			add(fmt.Errorf("input.choices has %d entries; at most %d", len(in.Choices), MaxChoices))
		}
		for i, c := range in.Choices {
			add(checkNote(fmt.Sprintf("input.choices[%d]", i), c))
		}
	case MethodInput:
		add(checkNote("input.title", in.Title))
		add(checkNote("input.placeholder", in.Placeholder))
	case MethodEditor:
		add(checkNote("input.title", in.Title))
		add(checkNote("input.initial", in.Initial))
	}
	return errors.Join(errs...)
}

// Answer statuses. "expired" is not here: this server never sends it.
const (
	AnswerAnswered  = "answered"
	AnswerCancelled = "cancelled"
	AnswerFailed    = "failed"
)

// Answer is the outcome of a question in domain terms. The room fills the
// fields of the question's method; Value turns it into the wire's value
// following the spec's table, so no caller hand-builds those shapes.
type Answer struct {
	Status string // answered, cancelled or failed
	// Answers is a questionnaire's answered questions, in question order:
	// every question when answered, those a member answered before another
	// was cancelled when cancelled.
	Answers []QuestionAnswer
	Yes     bool    // confirm: true only for Yes
	Choice  *string // select: the chosen string, nil when a member wrote an answer instead
	Text    string  // input, editor
	Message string  // failed: why
}

// QuestionAnswer is one entry of a questionnaire's answers.
type QuestionAnswer struct {
	QuestionIndex int      `json:"questionIndex"`
	Question      string   `json:"question"`
	Kind          string   `json:"kind"`   // option, multi, custom or chat
	Answer        *string  `json:"answer"` // null for multi
	Selected      []string `json:"selected"`
	Preview       string   `json:"preview"`
}

// Answer kinds of a questionnaire entry.
const (
	KindOption = "option"
	KindMulti  = "multi"
	KindCustom = "custom"
	KindChat   = "chat"
)

var questionAnswerKeys = parseVariantTable(map[string]string{
	KindOption: "questionIndex question kind answer preview?",
	KindMulti:  "questionIndex question kind answer selected",
	KindCustom: "questionIndex question kind answer",
	KindChat:   "questionIndex question kind answer",
})

func (QuestionAnswer) variantKeys() (string, map[string][]variantKey) {
	return "kind", questionAnswerKeys
}

// MarshalJSON writes exactly the fields of a's kind; "answer" is null for multi.
func (a QuestionAnswer) MarshalJSON() ([]byte, error) {
	if a.Kind == KindMulti {
		a.Answer = nil
	}
	return marshalVariant(a)
}

type questionnaireValue struct {
	Answers   []QuestionAnswer `json:"answers"`
	Cancelled bool             `json:"cancelled"`
}

// Result turns a into the input-result for request asked with in, checking
// that a fits the question it answers.
func (a Answer) Result(request string, in *Input) (InputResult, error) {
	r := InputResult{Request: request, Status: a.Status}
	var value any
	switch a.Status {
	case AnswerFailed:
		if strings.TrimSpace(a.Message) == "" {
			return r, errors.New("a failed answer needs a message")
		}
		r.Message = truncateRunes(a.Message, MaxNoteChars)
		return r, nil
	case AnswerAnswered, AnswerCancelled:
	default:
		return r, fmt.Errorf("answer status %q is not answered, cancelled or failed", a.Status)
	}
	answered := a.Status == AnswerAnswered
	switch in.Method {
	case MethodQuestionnaire:
		if err := checkAnswers(a.Answers, in.Params.Questions, answered); err != nil {
			return r, err
		}
		// The spec wants each question's verbatim text; the room need not
		// repeat what the request already holds.
		answers := make([]QuestionAnswer, len(a.Answers))
		for i, qa := range a.Answers {
			qa.Question = in.Params.Questions[qa.QuestionIndex].Question
			answers[i] = qa
		}
		value = questionnaireValue{Answers: answers, Cancelled: !answered}
	case MethodConfirm:
		value = answered && a.Yes
	case MethodSelect:
		if answered && a.Choice != nil {
			value = *a.Choice
		}
	case MethodInput, MethodEditor:
		if answered {
			value = a.Text
		}
	}
	raw, err := Marshal(value)
	if err != nil {
		return r, err
	}
	r.Value = raw
	return r, nil
}

func checkAnswers(answers []QuestionAnswer, questions []QuestionItem, all bool) error {
	if all && len(answers) != len(questions) {
		return fmt.Errorf("an answered questionnaire answers all %d questions, not %d", len(questions), len(answers))
	}
	last := -1
	for _, a := range answers {
		if a.QuestionIndex <= last || a.QuestionIndex >= len(questions) {
			return fmt.Errorf("answer for question %d is out of order or out of range", a.QuestionIndex)
		}
		last = a.QuestionIndex
		if _, ok := questionAnswerKeys[a.Kind]; !ok {
			return fmt.Errorf("answer kind %q is not option, multi, custom or chat", a.Kind)
		}
		if a.Kind != KindMulti && a.Answer == nil {
			return fmt.Errorf("a %s answer needs its text", a.Kind)
		}
	}
	return nil
}
