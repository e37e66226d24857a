package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The question call ("Questions"): the five methods, their fields and
// limits, how an answer becomes an input-result's value ("Answers"), and the
// JSON Schema of a questionnaire's questions for a host tool. The room's
// Decisions and the ask tool use this definition; nothing else spells it.

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
	for _, l := range in.BrokenLimits(false) {
		errs = append(errs, l.wireError())
	}
	return errors.Join(errs...)
}

// MaxJoinedDescriptionChars bounds an option's description that carries its
// preview joined onto its end (after a blank line), as a server does for a
// client without decision-option-previews.
const MaxJoinedDescriptionChars = MaxNoteChars + 2 + MaxPreviewChars

// A QuestionLimit is one limit of "Questions" that a question call breaks:
// a text longer than it may be, or a list with too many or too few entries.
// Each side words it its own way: the wire as a malformed message, the room
// as an invalid question.
type QuestionLimit struct {
	// Field is the method's field: questions, options or choices for a
	// list; question, header, label, description, preview, title,
	// message, choice, placeholder or initial for a text.
	Field    string
	Question int // the question's index, from question down to preview; else -1
	Option   int // the option's index for label, description and preview; else -1
	Choice   int // the choice's index for choice; else -1
	N        int // characters of a text, entries of a list
	Min, Max int
}

// List reports whether the limit counts a list's entries, not characters.
func (l QuestionLimit) List() bool {
	return l.Field == "questions" || l.Field == "options" || l.Field == "choices"
}

// BrokenLimits returns every limit of the call's method that it breaks, in
// the order of its fields. previewsJoined allows each option's description
// MaxJoinedDescriptionChars.
func (in *Input) BrokenLimits(previewsJoined bool) []QuestionLimit {
	var out []QuestionLimit
	text := func(field string, q, o, c int, s string, most int) {
		// len(s) bounds the count of characters from above.
		if n := len(s); n > most {
			if n = runeCount(s); n > most {
				out = append(out, QuestionLimit{Field: field, Question: q, Option: o, Choice: c, N: n, Max: most})
			}
		}
	}
	note := func(field, s string) { text(field, -1, -1, -1, s, MaxNoteChars) }
	switch in.Method {
	case MethodQuestionnaire:
		var qs []QuestionItem
		if in.Params != nil {
			qs = in.Params.Questions
		}
		if len(qs) < 1 || len(qs) > MaxQuestions {
			out = append(out, QuestionLimit{Field: "questions", Question: -1, Option: -1, Choice: -1, N: len(qs), Min: 1, Max: MaxQuestions})
		}
		description := MaxNoteChars
		if previewsJoined {
			description = MaxJoinedDescriptionChars
		}
		for i, q := range qs {
			text("question", i, -1, -1, q.Question, MaxNoteChars)
			text("header", i, -1, -1, q.Header, MaxShortChars)
			if len(q.Options) > MaxOptions {
				out = append(out, QuestionLimit{Field: "options", Question: i, Option: -1, Choice: -1, N: len(q.Options), Max: MaxOptions})
			}
			for j, o := range q.Options {
				text("label", i, j, -1, o.Label, MaxNoteChars)
				text("description", i, j, -1, o.Description, description)
				text("preview", i, j, -1, o.Preview, MaxPreviewChars)
			}
		}
	case MethodConfirm:
		note("title", in.Title)
		note("message", in.Message)
	case MethodSelect:
		note("title", in.Title)
		if len(in.Choices) > MaxChoices {
			out = append(out, QuestionLimit{Field: "choices", Question: -1, Option: -1, Choice: -1, N: len(in.Choices), Max: MaxChoices})
		}
		for i, c := range in.Choices {
			text("choice", -1, -1, i, c, MaxNoteChars)
		}
	case MethodInput:
		note("title", in.Title)
		note("placeholder", in.Placeholder)
	case MethodEditor:
		note("title", in.Title)
		note("initial", in.Initial)
	}
	return out
}

// wireError words l as a malformed input-request says it.
func (l QuestionLimit) wireError() error {
	at := "input"
	if l.Question >= 0 {
		at = fmt.Sprintf("input.params.questions[%d]", l.Question)
	}
	switch l.Field {
	case "questions":
		return fmt.Errorf("input.params.questions has %d questions; a questionnaire has %d to %d", l.N, l.Min, l.Max)
	case "options":
		return fmt.Errorf("%s has %d options; at most %d", at, l.N, l.Max)
	case "choices":
		return fmt.Errorf("input.choices has %d entries; at most %d", l.N, l.Max)
	case "label", "description", "preview":
		at = fmt.Sprintf("%s.options[%d].%s", at, l.Option, l.Field)
	case "choice":
		at = fmt.Sprintf("input.choices[%d]", l.Choice)
	default:
		at += "." + l.Field
	}
	return fmt.Errorf("%s has %d characters; the limit is %d to %d", at, l.N, l.Min, l.Max)
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

// QuestionsSchema is the JSON Schema of a questionnaire's questions as a
// host tool takes them (the ask tool's "questions"), from the same limits
// the wire checks: 1 to MaxQuestions questions of at most MaxOptions
// options. It offers no preview: previews belong to the
// decision-option-previews feature, which a turn's tools cannot assume.
func QuestionsSchema() json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"array","minItems":1,"maxItems":%d,"items":{"type":"object","required":["question","header","options"],"properties":{`+
		`"question":{"type":"string","maxLength":%d,"description":"Markdown: the first line is the heading, the rest the body."},`+
		`"header":{"type":"string","maxLength":%d,"description":"A short tag for the card, such as Storage."},`+
		`"options":{"type":"array","maxItems":%d,"items":{"type":"object","required":["label","description"],"properties":{`+
		`"label":{"type":"string","maxLength":%d},"description":{"type":"string","maxLength":%d}},"additionalProperties":false}},`+
		`"multiSelect":{"type":"boolean","description":"Let people choose several options."}`+
		`},"additionalProperties":false}}`,
		MaxQuestions, MaxNoteChars, MaxShortChars, MaxOptions, MaxNoteChars, MaxNoteChars))
}
