package room

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// The question call is the agent connection's ("Questions"): its methods,
// fields and limits are defined once, in agentconn/wire. The room keeps it
// in its own terms (QuestionCall), which tell an absent optional field from
// an empty one and remember a joined preview, words what breaks a limit for
// the Planner, and turns members' answers into outcomes.

// Question methods: the five question calls an input-request carries, and
// the ask host tool's questionnaire.
const (
	MethodQuestionnaire = wire.MethodQuestionnaire
	MethodConfirm       = wire.MethodConfirm
	MethodSelect        = wire.MethodSelect
	MethodInput         = wire.MethodInput
	MethodEditor        = wire.MethodEditor
)

// An Option is one offered answer to a questionnaire question.
type Option struct {
	Label       string  `json:"label"`
	Description string  `json:"description"`
	Preview     *string `json:"preview,omitempty"`
}

// A Question is one question of a questionnaire; each becomes a card.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
}

// A QuestionCall is one question call, an input-request's input. Which
// fields it uses depends on Method:
//
//	{ "method": "questionnaire", "params": { "questions": [Question...] } }
//	{ "method": "confirm", "title": "", "message": "" }
//	{ "method": "select", "title": "", "choices": [] }
//	{ "method": "input", "title": "", "placeholder"?: "" }
//	{ "method": "editor", "title": "", "initial"?: "" }
type QuestionCall struct {
	Method      string
	Questions   []Question // questionnaire
	Title       string     // confirm, select, input, editor
	Message     string     // confirm
	Choices     []string   // select
	Placeholder *string    // input
	Initial     *string    // editor
	// PreviewsJoined: each option's preview was joined onto the end of its
	// description, for a client without decision-option-previews, so a
	// description may hold a preview's length besides its own. Not stored.
	PreviewsJoined bool
}

// The wire shapes, one per method, so strict decoding refuses a field the
// method does not have.
type (
	questionnaireWire struct {
		Method string `json:"method"`
		Params struct {
			Questions []Question `json:"questions"`
		} `json:"params"`
	}
	confirmWire struct {
		Method  string `json:"method"`
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	selectWire struct {
		Method  string   `json:"method"`
		Title   string   `json:"title"`
		Choices []string `json:"choices"`
	}
	inputWire struct {
		Method      string  `json:"method"`
		Title       string  `json:"title"`
		Placeholder *string `json:"placeholder,omitempty"`
	}
	editorWire struct {
		Method  string  `json:"method"`
		Title   string  `json:"title"`
		Initial *string `json:"initial,omitempty"`
	}
)

// ParseQuestionCall decodes and validates a question call. Unknown fields and
// missing required ones are refused, as the spec's objects are strict.
func ParseQuestionCall(input []byte) (QuestionCall, error) {
	var probe struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal(input, &probe); err != nil {
		return QuestionCall{}, errorf(CodeInvalidQuestion, "A question call is a JSON object with a method: %v.", err)
	}
	var (
		c        QuestionCall
		err      error
		required []string
	)
	switch probe.Method {
	case MethodQuestionnaire:
		var w questionnaireWire
		err = decodeStrict(input, &w)
		c = QuestionCall{Method: w.Method, Questions: w.Params.Questions}
		if err == nil {
			err = requireQuestionnaireFields(input)
		}
	case MethodConfirm:
		var w confirmWire
		err, required = decodeStrict(input, &w), []string{"title", "message"}
		c = QuestionCall{Method: w.Method, Title: w.Title, Message: w.Message}
	case MethodSelect:
		var w selectWire
		err, required = decodeStrict(input, &w), []string{"title", "choices"}
		c = QuestionCall{Method: w.Method, Title: w.Title, Choices: w.Choices}
	case MethodInput:
		var w inputWire
		err, required = decodeStrict(input, &w), []string{"title"}
		c = QuestionCall{Method: w.Method, Title: w.Title, Placeholder: w.Placeholder}
	case MethodEditor:
		var w editorWire
		err, required = decodeStrict(input, &w), []string{"title"}
		c = QuestionCall{Method: w.Method, Title: w.Title, Initial: w.Initial}
	default:
		return QuestionCall{}, errorf(CodeInvalidQuestion, "method %q is not a question; use questionnaire, confirm, select, input or editor.", probe.Method)
	}
	if err == nil && required != nil {
		err = requireRawFields(input, append(required, "method")...)
	}
	if err != nil {
		return QuestionCall{}, errorf(CodeInvalidQuestion, "The %s call is malformed: %v.", probe.Method, err)
	}
	return c, c.Validate()
}

// MarshalJSON writes the call in its wire shape, so a stored call reads back
// as it came.
func (c QuestionCall) MarshalJSON() ([]byte, error) {
	switch c.Method {
	case MethodQuestionnaire:
		w := questionnaireWire{Method: c.Method}
		w.Params.Questions = c.Questions
		return json.Marshal(w)
	case MethodConfirm:
		return json.Marshal(confirmWire{c.Method, c.Title, c.Message})
	case MethodSelect:
		choices := c.Choices
		if choices == nil {
			choices = []string{}
		}
		return json.Marshal(selectWire{c.Method, c.Title, choices})
	case MethodInput:
		return json.Marshal(inputWire{c.Method, c.Title, c.Placeholder})
	case MethodEditor:
		return json.Marshal(editorWire{c.Method, c.Title, c.Initial})
	}
	return nil, fmt.Errorf("room: question call with method %q", c.Method)
}

// Validate checks every limit the spec sets for the call's method, and
// reports the first it breaks.
func (c QuestionCall) Validate() error {
	switch c.Method {
	case MethodQuestionnaire, MethodConfirm, MethodSelect, MethodInput, MethodEditor:
	default:
		return errorf(CodeInvalidQuestion, "method %q is not a question; use questionnaire, confirm, select, input or editor.", c.Method)
	}
	in := c.Input()
	broken := in.BrokenLimits(c.PreviewsJoined)
	if len(broken) == 0 {
		return nil
	}
	first := broken[0]
	for _, l := range broken {
		if l.Field == "choices" { // a select's count of choices goes before its title
			first = l
		}
	}
	return errorf(CodeInvalidQuestion, "%s", limitMessage(first))
}

// limitMessage words a broken limit for the Planner.
func limitMessage(l wire.QuestionLimit) string {
	var field string
	switch l.Field {
	case "questions":
		return fmt.Sprintf("A questionnaire has %d to %d questions; this one has %d.", l.Min, l.Max, l.N)
	case "options":
		return fmt.Sprintf("Question %d has %d options; a question offers at most %d.", l.Question, l.N, l.Max)
	case "choices":
		return fmt.Sprintf("A select offers at most %d choices; this one has %d.", l.Max, l.N)
	case "question":
		field = fmt.Sprintf("Question %d's text", l.Question)
	case "header":
		field = fmt.Sprintf("Question %d's header", l.Question)
	case "label", "description", "preview":
		field = fmt.Sprintf("Question %d, option %d's %s", l.Question, l.Option, l.Field)
	case "choice":
		field = fmt.Sprintf("Choice %d", l.Choice)
	default:
		field = strings.ToUpper(l.Field[:1]) + l.Field[1:]
	}
	return fmt.Sprintf("%s is %d characters; it may have at most %d.", field, l.N, l.Max)
}

// Input is the call as the agent connection carries it: an absent optional
// field becomes an empty one.
func (c QuestionCall) Input() wire.Input {
	in := wire.Input{Method: c.Method}
	switch c.Method {
	case MethodQuestionnaire:
		qs := make([]wire.QuestionItem, len(c.Questions))
		for i, q := range c.Questions {
			opts := make([]wire.Option, len(q.Options))
			for j, o := range q.Options {
				opts[j] = wire.Option{Label: o.Label, Description: o.Description, Preview: deref(o.Preview)}
			}
			qs[i] = wire.QuestionItem{Question: q.Question, Header: q.Header, Options: opts, MultiSelect: q.MultiSelect}
		}
		in.Params = &wire.QuestionnaireParams{Questions: qs}
	case MethodConfirm:
		in.Title, in.Message = c.Title, c.Message
	case MethodSelect:
		in.Title, in.Choices = c.Title, c.Choices
	case MethodInput:
		in.Title, in.Placeholder = c.Title, deref(c.Placeholder)
	case MethodEditor:
		in.Title, in.Initial = c.Title, deref(c.Initial)
	}
	return in
}

// QuestionCallOf is an input-request's call in the room's terms, as the
// agent connection decoded and checked it. An empty optional field (an
// option's preview, a placeholder, an initial text) is an absent one, as
// the wire leaves it out. Ask validates the call.
func QuestionCallOf(in wire.Input) QuestionCall {
	c := QuestionCall{Method: in.Method}
	switch in.Method {
	case MethodQuestionnaire:
		var qs []wire.QuestionItem
		if in.Params != nil {
			qs = in.Params.Questions
		}
		c.Questions = make([]Question, len(qs))
		for i, q := range qs {
			opts := make([]Option, len(q.Options))
			for j, o := range q.Options {
				opts[j] = Option{Label: o.Label, Description: o.Description, Preview: nonEmpty(o.Preview)}
			}
			c.Questions[i] = Question{Question: q.Question, Header: q.Header, Options: opts, MultiSelect: q.MultiSelect}
		}
	case MethodConfirm:
		c.Title, c.Message = in.Title, in.Message
	case MethodSelect:
		c.Title, c.Choices = in.Title, in.Choices
	case MethodInput:
		c.Title, c.Placeholder = in.Title, nonEmpty(in.Placeholder)
	case MethodEditor:
		c.Title, c.Initial = in.Title, nonEmpty(in.Initial)
	}
	return c
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nonEmpty is s, or nil when it is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// BlockRef names a block of the plan as the Planner last saw it:
// { "index": 0, "digest": "sha256:<64 hex>" }.
type BlockRef struct {
	Index  int    `json:"index"`
	Digest string `json:"digest"`
}

var digestShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

// AskArgs are the ask host tool's arguments: { "questions": [Question...],
// "block"?: BlockRef }. The questions are a questionnaire's.
type AskArgs struct {
	Questions []Question `json:"questions"`
	Block     *BlockRef  `json:"block,omitempty"`
}

// ParseAskArgs decodes and validates ask's input.
func ParseAskArgs(input []byte) (AskArgs, error) {
	var a AskArgs
	if err := decodeStrict(input, &a); err != nil {
		return a, errorf(CodeInvalidQuestion, `ask takes {"questions": [{"question", "header", "options", "multiSelect"?}], "block"?: {"index", "digest"}}: %v.`, err)
	}
	if a.Block != nil && (a.Block.Index < 0 || !digestShape().MatchString(a.Block.Digest)) {
		return a, errorf(CodeInvalidQuestion, `block is {"index", "digest"} as read_plan's outline gives them: a block index from 0 and "sha256:" with 64 lowercase hex digits.`)
	}
	return a, a.Call().Validate()
}

// Call is the questionnaire the ask call makes.
func (a AskArgs) Call() QuestionCall {
	return QuestionCall{Method: MethodQuestionnaire, Questions: a.Questions}
}

// Answer kinds of a questionnaire answer.
const (
	KindOption = wire.KindOption // one offered option of a single-select question
	KindMulti  = wire.KindMulti  // offered options of a multiSelect question
	KindCustom = wire.KindCustom // written, for a single-select question without previews
	KindChat   = wire.KindChat   // written, for a multiSelect question or one with previews
)

// An Answer is one answered question of a questionnaire, as input-result
// carries it. Answer is null for multi.
type Answer struct {
	QuestionIndex int      `json:"questionIndex"`
	Question      string   `json:"question"`
	Kind          string   `json:"kind"`
	Answer        *string  `json:"answer"`
	Preview       *string  `json:"preview,omitempty"`
	Selected      []string `json:"selected,omitempty"`
}

// QuestionnaireValue is a questionnaire's input-result value.
type QuestionnaireValue struct {
	Answers   []Answer `json:"answers"`
	Cancelled bool     `json:"cancelled"`
}

// A Pick is what members submitted for one question of a questionnaire:
// option labels, or a written answer. A label that no option has is one a
// member added, which makes the answer a written one.
type Pick struct {
	QuestionIndex int
	Labels        []string
	Text          string
}

// A Reply is what members submitted for a whole question call.
type Reply struct {
	Picks  []Pick  // questionnaire: one for each question
	Yes    bool    // confirm
	Choice *string // select: one of the choices, or nil when a member wrote an answer instead
	Text   string  // input, editor
}

// Outcome statuses this server sends. (expired is an older server's.)
const (
	StatusAnswered  = wire.AnswerAnswered
	StatusCancelled = wire.AnswerCancelled
	StatusFailed    = wire.AnswerFailed
)

// An Outcome is an input-result's status and value, or message for failed;
// the connection adds type and request.
type Outcome struct {
	Status  string
	Value   any    // by method: QuestionnaireValue, bool, *string or string
	Message string // failed only
}

// MarshalJSON writes value even when it is null (a cancelled select's is),
// and only message for failed.
func (o Outcome) MarshalJSON() ([]byte, error) {
	if o.Status == StatusFailed {
		return json.Marshal(struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		}{o.Status, o.Message})
	}
	return json.Marshal(struct {
		Status string `json:"status"`
		Value  any    `json:"value"`
	}{o.Status, o.Value})
}

// Answered is the outcome when members answered the call.
func (c QuestionCall) Answered(r Reply) (Outcome, error) {
	switch c.Method {
	case MethodQuestionnaire:
		answers, err := c.answers(r.Picks)
		if err != nil {
			return Outcome{}, err
		}
		if len(answers) != len(c.Questions) {
			return Outcome{}, errorf(CodeInvalidAnswer, "Answer every question: %d of %d have an answer.", len(answers), len(c.Questions))
		}
		return Outcome{Status: StatusAnswered, Value: QuestionnaireValue{Answers: answers}}, nil
	case MethodConfirm:
		return Outcome{Status: StatusAnswered, Value: r.Yes}, nil
	case MethodSelect:
		if r.Choice != nil && !contains(c.Choices, *r.Choice) {
			return Outcome{}, errorf(CodeInvalidAnswer, "%q is not one of the choices.", *r.Choice)
		}
		return Outcome{Status: StatusAnswered, Value: r.Choice}, nil
	case MethodInput, MethodEditor:
		return Outcome{Status: StatusAnswered, Value: r.Text}, nil
	}
	return Outcome{}, errorf(CodeInvalidQuestion, "method %q is not a question.", c.Method)
}

// Cancelled is the outcome when the call is withdrawn or a member cancelled
// it. answered are the questions of a questionnaire that members answered
// before one was cancelled; every other method has none.
func (c QuestionCall) Cancelled(answered []Pick) (Outcome, error) {
	switch c.Method {
	case MethodQuestionnaire:
		answers, err := c.answers(answered)
		if err != nil {
			return Outcome{}, err
		}
		return Outcome{Status: StatusCancelled, Value: QuestionnaireValue{Answers: answers, Cancelled: true}}, nil
	case MethodConfirm, MethodSelect, MethodInput, MethodEditor:
		if len(answered) > 0 {
			return Outcome{}, errorf(CodeInvalidAnswer, "Only a questionnaire keeps answers when it is cancelled.")
		}
		if c.Method == MethodConfirm {
			return Outcome{Status: StatusCancelled, Value: false}, nil
		}
		return Outcome{Status: StatusCancelled, Value: nil}, nil
	}
	return Outcome{}, errorf(CodeInvalidQuestion, "method %q is not a question.", c.Method)
}

// Failed is the outcome of a call that could not become Decisions.
func Failed(why string) Outcome {
	return Outcome{Status: StatusFailed, Message: why}
}

// answers shapes picks, in question order. Answers is never nil: an empty
// list is "answers": [], not null.
func (c QuestionCall) answers(picks []Pick) ([]Answer, error) {
	answers := []Answer{}
	seen := map[int]bool{}
	for _, p := range picks {
		if p.QuestionIndex < 0 || p.QuestionIndex >= len(c.Questions) {
			return nil, errorf(CodeInvalidAnswer, "There is no question %d; the questionnaire has questions 0 to %d.", p.QuestionIndex, len(c.Questions)-1)
		}
		if seen[p.QuestionIndex] {
			return nil, errorf(CodeInvalidAnswer, "Question %d has two answers; give it one.", p.QuestionIndex)
		}
		seen[p.QuestionIndex] = true
		a, err := c.Questions[p.QuestionIndex].answer(p)
		if err != nil {
			return nil, err
		}
		answers = append(answers, a)
	}
	sort.Slice(answers, func(i, j int) bool { return answers[i].QuestionIndex < answers[j].QuestionIndex })
	return answers, nil
}

// answer shapes one pick by the spec's rules: offered options give option
// or multi; anything written, or labels members added, gives custom when a
// single-select question has no previews (the card can show the text as if
// it were an option) and chat otherwise.
func (q Question) answer(p Pick) (Answer, error) {
	a := Answer{QuestionIndex: p.QuestionIndex, Question: q.Question}
	switch {
	case p.Text != "" && len(p.Labels) > 0:
		return a, errorf(CodeInvalidAnswer, "Question %d: choose options or write an answer, not both.", p.QuestionIndex)
	case strings.TrimSpace(p.Text) == "" && len(p.Labels) == 0:
		return a, errorf(CodeInvalidAnswer, "Question %d has no answer: choose an option or write one.", p.QuestionIndex)
	}
	offered := len(p.Labels) > 0
	chosen := map[string]bool{}
	for _, l := range p.Labels {
		if chosen[l] {
			return a, errorf(CodeInvalidAnswer, "Question %d: %q is chosen twice.", p.QuestionIndex, l)
		}
		chosen[l] = true
		offered = offered && q.option(l) != nil
	}

	switch {
	case offered && !q.MultiSelect:
		if len(p.Labels) > 1 {
			return a, errorf(CodeInvalidAnswer, "Question %d takes one option; %d were chosen.", p.QuestionIndex, len(p.Labels))
		}
		o := q.option(p.Labels[0])
		a.Kind, a.Answer, a.Preview = KindOption, &o.Label, o.Preview
	case offered:
		a.Kind = KindMulti
		for _, o := range q.Options { // in the options' order, whatever order they were clicked in
			if chosen[o.Label] {
				a.Selected = append(a.Selected, o.Label)
				delete(chosen, o.Label) // a repeated label is one choice
			}
		}
	default:
		written := p.Text
		if written == "" {
			written = strings.Join(p.Labels, ", ")
		}
		a.Kind, a.Answer = KindCustom, &written
		if q.MultiSelect || q.hasPreview() {
			a.Kind = KindChat
		}
	}
	return a, nil
}

// option is the first option with label, or nil.
func (q Question) option(label string) *Option {
	for i := range q.Options {
		if q.Options[i].Label == label {
			return &q.Options[i]
		}
	}
	return nil
}

func (q Question) hasPreview() bool {
	for _, o := range q.Options {
		if o.Preview != nil {
			return true
		}
	}
	return false
}

// CardHeading splits a question's text into the card's heading, its first
// line, and the body, everything after the first line break (verbatim: a
// leading blank line means nothing to Markdown). Text without a line break
// is a heading alone.
func CardHeading(question string) (heading, body string) {
	i := strings.IndexAny(question, "\r\n")
	if i < 0 {
		return question, ""
	}
	next := i + 1
	if strings.HasPrefix(question[i:], "\r\n") {
		next++
	}
	return question[:i], question[next:]
}

// PlaceAfter is the block a question's cards go directly after, or -1 for
// the end of the plan, given the block the Planner named by index and
// digest. A block is found by its digest, so a passage that only moved
// (someone added a paragraph above it) keeps its cards; the cards go to the
// end when no block has that digest any more (the block changed), when
// several do (it is ambiguous), or when the block is itself a decision card.
// index is then only the Planner's address for it, and may be out of date.
func PlaceAfter(blocks []Block, index int, digest string) int {
	found := -1
	for _, b := range blocks {
		if b.Digest != digest {
			continue
		}
		if found >= 0 {
			return -1
		}
		found = b.Index
	}
	if found < 0 || blocks[found].Type == BlockDecision {
		return -1
	}
	return found
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// requireRawFields refuses an object that lacks one of names.
func requireRawFields(input []byte, names ...string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil {
		return err
	}
	for _, n := range names {
		if _, ok := fields[n]; !ok {
			return fmt.Errorf("%s is missing", n)
		}
	}
	return nil
}

// requireQuestionnaireFields refuses a questionnaire that leaves out a
// required field at any depth: encoding/json cannot tell absent from empty.
func requireQuestionnaireFields(input []byte) error {
	var call struct {
		Params json.RawMessage `json:"params"`
	}
	var params struct {
		Questions []json.RawMessage `json:"questions"`
	}
	var question struct {
		Options []json.RawMessage `json:"options"`
	}
	if err := requireRawFields(input, "method", "params"); err != nil {
		return err
	}
	if err := json.Unmarshal(input, &call); err != nil {
		return err
	}
	if err := requireRawFields(call.Params, "questions"); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	if err := json.Unmarshal(call.Params, &params); err != nil {
		return err
	}
	for i, q := range params.Questions {
		if err := requireRawFields(q, "question", "header", "options"); err != nil {
			return fmt.Errorf("question %d: %w", i, err)
		}
		if err := json.Unmarshal(q, &question); err != nil {
			return err
		}
		for j, o := range question.Options {
			if err := requireRawFields(o, "label", "description"); err != nil {
				return fmt.Errorf("question %d, option %d: %w", i, j, err)
			}
		}
	}
	return nil
}
