package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

func TestParseQuestionCall(t *testing.T) {
	valid := []string{
		`{"method":"questionnaire","params":{"questions":[{"question":"Which store?","header":"Storage","options":[{"label":"SQLite","description":"one file"},{"label":"PostgreSQL","description":"","preview":"| a |\n|---|"}],"multiSelect":true}]}}`,
		`{"method":"questionnaire","params":{"questions":[{"question":"Anything else?","header":"","options":[]}]}}`,
		`{"method":"confirm","title":"Ship it?","message":"The pilot is ready."}`,
		`{"method":"select","title":"Region","choices":["eu","us"]}`,
		`{"method":"select","title":"Region","choices":[]}`,
		`{"method":"input","title":"Name"}`,
		`{"method":"input","title":"Name","placeholder":"e.g. Ada"}`,
		`{"method":"editor","title":"Notes","initial":"- a"}`,
		`{"method":"editor","title":"Notes"}`,
	}
	for _, input := range valid {
		c, err := ParseQuestionCall([]byte(input))
		if err != nil {
			t.Errorf("ParseQuestionCall(%s) = %v", input, err)
			continue
		}
		// The call reads back in its wire shape, so the store can keep it as JSON.
		if got := mustJSON(c); got != input {
			t.Errorf("round trip\n got %s\nwant %s", got, input)
		}
	}

	long := func(n int) string { return strings.Repeat("é", n) } // two bytes, one character
	questionnaire := func(q string) string {
		return `{"method":"questionnaire","params":{"questions":[` + q + `]}}`
	}
	question := func(header, options string) string {
		return `{"question":"Q","header":"` + header + `","options":[` + options + `]}`
	}
	option := `{"label":"L","description":"D"}`
	many := func(item string, n int) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }

	tests := []struct {
		input, message string
	}{
		{`{"method":"ask"}`, `method "ask" is not a question; use questionnaire, confirm, select, input or editor.`},
		{`[]`, "A question call is a JSON object with a method: json: cannot unmarshal array into Go value of type struct { Method string \"json:\\\"method\\\"\" }."},
		{`{"method":"confirm","title":"T","message":"M","extra":1}`, `The confirm call is malformed: json: unknown field "extra".`},
		{`{"method":"confirm","title":"T"}`, `The confirm call is malformed: message is missing.`},
		{`{"method":"select","title":"T"}`, `The select call is malformed: choices is missing.`},
		{`{"method":"input"}`, `The input call is malformed: title is missing.`},
		{`{"method":"editor","title":"T","placeholder":"p"}`, `The editor call is malformed: json: unknown field "placeholder".`},
		{`{"method":"questionnaire"}`, `The questionnaire call is malformed: params is missing.`},
		{`{"method":"questionnaire","params":{}}`, `The questionnaire call is malformed: params: questions is missing.`},
		{questionnaire(`{"question":"Q","options":[]}`), `The questionnaire call is malformed: question 0: header is missing.`},
		{questionnaire(question("H", `{"label":"L"}`)), `The questionnaire call is malformed: question 0, option 0: description is missing.`},
		{questionnaire(question("H", `{"label":"L","description":"D","image":"x"}`)), `The questionnaire call is malformed: json: unknown field "image".`},
		{questionnaire(``), `A questionnaire has 1 to 16 questions; this one has 0.`},
		{questionnaire(many(question("H", ""), 17)), `A questionnaire has 1 to 16 questions; this one has 17.`},
		{questionnaire(question(long(129), "")), `Question 0's header is 129 characters; it may have at most 128.`},
		{questionnaire(question("H", many(option, 33))), `Question 0 has 33 options; a question offers at most 32.`},
		{questionnaire(`{"question":"` + long(4001) + `","header":"","options":[]}`), `Question 0's text is 4001 characters; it may have at most 4000.`},
		{questionnaire(question("H", `{"label":"`+long(4001)+`","description":""}`)), `Question 0, option 0's label is 4001 characters; it may have at most 4000.`},
		{questionnaire(question("H", option+`,{"label":"L","description":"`+long(4001)+`"}`)), `Question 0, option 1's description is 4001 characters; it may have at most 4000.`},
		{questionnaire(question("H", `{"label":"L","description":"","preview":"`+long(16001)+`"}`)), `Question 0, option 0's preview is 16001 characters; it may have at most 16000.`},
		{`{"method":"confirm","title":"` + long(4001) + `","message":""}`, `Title is 4001 characters; it may have at most 4000.`},
		{`{"method":"confirm","title":"","message":"` + long(4001) + `"}`, `Message is 4001 characters; it may have at most 4000.`},
		{`{"method":"select","title":"T","choices":[` + many(`"c"`, 33) + `]}`, `A select offers at most 32 choices; this one has 33.`},
		{`{"method":"select","title":"T","choices":["` + long(4001) + `"]}`, `Choice 0 is 4001 characters; it may have at most 4000.`},
		{`{"method":"input","title":"T","placeholder":"` + long(4001) + `"}`, `Placeholder is 4001 characters; it may have at most 4000.`},
		{`{"method":"editor","title":"T","initial":"` + long(4001) + `"}`, `Initial is 4001 characters; it may have at most 4000.`},
	}
	for _, tt := range tests {
		_, err := ParseQuestionCall([]byte(tt.input))
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidQuestion || e.Message != tt.message {
			t.Errorf("ParseQuestionCall(%.80s...) = %v\nwant %s %q", tt.input, err, CodeInvalidQuestion, tt.message)
		}
	}

	// Every limit is inclusive and counts characters, not bytes.
	atLimits := []string{
		questionnaire(`{"question":"` + long(4000) + `","header":"` + long(128) + `","options":[` +
			many(`{"label":"`+long(4000)+`","description":"`+long(4000)+`","preview":"`+long(16000)+`"}`, 32) + `]}`),
		questionnaire(many(question("H", option), 16)),
		`{"method":"select","title":"` + long(4000) + `","choices":[` + many(`"`+long(4000)+`"`, 32) + `]}`,
	}
	for _, input := range atLimits {
		if _, err := ParseQuestionCall([]byte(input)); err != nil {
			t.Errorf("a call at every limit: %v", err)
		}
	}
}

func TestParseAskArgs(t *testing.T) {
	digest := Digest("# Plan")
	a, err := ParseAskArgs([]byte(`{"questions":[{"question":"Q","header":"H","options":[]}],"block":{"index":2,"digest":"` + digest + `"}}`))
	if err != nil || a.Block == nil || *a.Block != (BlockRef{2, digest}) || a.Call().Method != MethodQuestionnaire {
		t.Fatalf("ParseAskArgs = %+v, %v", a, err)
	}
	for _, input := range []string{
		`{"questions":[{"question":"Q","header":"H","options":[]}],"block":{"index":-1,"digest":"` + digest + `"}}`,
		`{"questions":[{"question":"Q","header":"H","options":[]}],"block":{"index":0,"digest":"sha256:ABC"}}`,
		`{"questions":[],"block":null}`,
		`{"questions":[{"question":"Q","header":"H","options":[]}],"blocks":{}}`,
	} {
		var e *Error
		if _, err := ParseAskArgs([]byte(input)); !errors.As(err, &e) || e.Code != CodeInvalidQuestion {
			t.Errorf("ParseAskArgs(%s) = %v, want %s", input, err, CodeInvalidQuestion)
		}
	}
}

// storageCall has a question of each kind the answer rules tell apart.
var storageCall = QuestionCall{Method: MethodQuestionnaire, Questions: []Question{
	{Question: "Which store?\n\nWe need one.", Header: "Storage", Options: []Option{
		{Label: "SQLite", Description: "one file"}, {Label: "PostgreSQL", Description: "a server"}}},
	{Question: "Which layout?", Header: "Layout", Options: []Option{
		{Label: "Split", Description: "", Preview: contentOf("```mermaid\ngraph LR\n```")}, {Label: "Tabs", Description: ""}}},
	{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []Option{
		{Label: "eu", Description: ""}, {Label: "us", Description: ""}, {Label: "ap", Description: ""}}},
}}

func TestAnswered(t *testing.T) {
	tests := []struct {
		name  string
		call  QuestionCall
		reply Reply
		want  string
	}{
		{"options", storageCall, Reply{Picks: []Pick{
			{QuestionIndex: 2, Labels: []string{"us", "eu"}},
			{QuestionIndex: 0, Labels: []string{"SQLite"}},
			{QuestionIndex: 1, Labels: []string{"Split"}},
		}}, `{"status":"answered","value":{"answers":[` +
			`{"questionIndex":0,"question":"Which store?\n\nWe need one.","kind":"option","answer":"SQLite"},` +
			`{"questionIndex":1,"question":"Which layout?","kind":"option","answer":"Split","preview":"` + "```mermaid\\ngraph LR\\n```" + `"},` +
			`{"questionIndex":2,"question":"Which regions?","kind":"multi","answer":null,"selected":["eu","us"]}` +
			`],"cancelled":false}}`},
		{"written answers", storageCall, Reply{Picks: []Pick{
			{QuestionIndex: 0, Text: "DuckDB"},
			{QuestionIndex: 1, Text: "Both"},
			{QuestionIndex: 2, Text: "wherever"},
		}}, `{"status":"answered","value":{"answers":[` +
			`{"questionIndex":0,"question":"Which store?\n\nWe need one.","kind":"custom","answer":"DuckDB"},` +
			`{"questionIndex":1,"question":"Which layout?","kind":"chat","answer":"Both"},` +
			`{"questionIndex":2,"question":"Which regions?","kind":"chat","answer":"wherever"}` +
			`],"cancelled":false}}`},
		{"options members added", storageCall, Reply{Picks: []Pick{
			{QuestionIndex: 0, Labels: []string{"DuckDB"}},
			{QuestionIndex: 1, Labels: []string{"Grid"}},
			{QuestionIndex: 2, Labels: []string{"eu", "sa", "af"}},
		}}, `{"status":"answered","value":{"answers":[` +
			`{"questionIndex":0,"question":"Which store?\n\nWe need one.","kind":"custom","answer":"DuckDB"},` +
			`{"questionIndex":1,"question":"Which layout?","kind":"chat","answer":"Grid"},` +
			`{"questionIndex":2,"question":"Which regions?","kind":"chat","answer":"eu, sa, af"}` +
			`],"cancelled":false}}`},
		{"confirm yes", QuestionCall{Method: MethodConfirm}, Reply{Yes: true}, `{"status":"answered","value":true}`},
		{"confirm no", QuestionCall{Method: MethodConfirm}, Reply{}, `{"status":"answered","value":false}`},
		{"select a choice", QuestionCall{Method: MethodSelect, Choices: []string{"eu", "us"}}, Reply{Choice: contentOf("us")}, `{"status":"answered","value":"us"}`},
		{"select written instead", QuestionCall{Method: MethodSelect, Choices: []string{"eu"}}, Reply{Text: "mars"}, `{"status":"answered","value":null}`},
		{"input", QuestionCall{Method: MethodInput}, Reply{Text: "Ada"}, `{"status":"answered","value":"Ada"}`},
		{"editor, empty text", QuestionCall{Method: MethodEditor}, Reply{}, `{"status":"answered","value":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.call.Answered(tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(o); got != tt.want {
				t.Errorf("Answered\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	tests := []struct {
		name     string
		call     QuestionCall
		answered []Pick
		want     string
	}{
		{"questionnaire with answers kept", storageCall, []Pick{{QuestionIndex: 2, Labels: []string{"ap"}}},
			`{"status":"cancelled","value":{"answers":[{"questionIndex":2,"question":"Which regions?","kind":"multi","answer":null,"selected":["ap"]}],"cancelled":true}}`},
		{"questionnaire withdrawn", storageCall, nil, `{"status":"cancelled","value":{"answers":[],"cancelled":true}}`},
		{"confirm", QuestionCall{Method: MethodConfirm}, nil, `{"status":"cancelled","value":false}`},
		{"select", QuestionCall{Method: MethodSelect}, nil, `{"status":"cancelled","value":null}`},
		{"input", QuestionCall{Method: MethodInput}, nil, `{"status":"cancelled","value":null}`},
		{"editor", QuestionCall{Method: MethodEditor}, nil, `{"status":"cancelled","value":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.call.Cancelled(tt.answered)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(o); got != tt.want {
				t.Errorf("Cancelled\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	if got, want := mustJSON(Failed("16 questions are already open on this connection.")),
		`{"status":"failed","message":"16 questions are already open on this connection."}`; got != want {
		t.Errorf("Failed = %s, want %s", got, want)
	}
}

func TestAnswerRefusals(t *testing.T) {
	all := func(extra ...Pick) []Pick {
		return append([]Pick{{QuestionIndex: 0, Text: "x"}, {QuestionIndex: 1, Text: "x"}, {QuestionIndex: 2, Text: "x"}}, extra...)
	}
	tests := []struct {
		name    string
		call    QuestionCall
		reply   Reply
		message string
	}{
		{"a question left out", storageCall, Reply{Picks: all()[:2]}, "Answer every question: 2 of 3 have an answer."},
		{"a question answered twice", storageCall, Reply{Picks: all(Pick{QuestionIndex: 1, Text: "y"})}, "Question 1 has two answers; give it one."},
		{"no such question", storageCall, Reply{Picks: all(Pick{QuestionIndex: 3, Text: "y"})}, "There is no question 3; the questionnaire has questions 0 to 2."},
		{"options and text", storageCall, Reply{Picks: []Pick{{QuestionIndex: 0, Labels: []string{"SQLite"}, Text: "y"}}}, "Question 0: choose options or write an answer, not both."},
		{"nothing", storageCall, Reply{Picks: []Pick{{QuestionIndex: 0, Text: "  "}}}, "Question 0 has no answer: choose an option or write one."},
		{"two options for a single-select question", storageCall, Reply{Picks: []Pick{{QuestionIndex: 0, Labels: []string{"SQLite", "PostgreSQL"}}}}, "Question 0 takes one option; 2 were chosen."},
		{"an option chosen twice", storageCall, Reply{Picks: []Pick{{QuestionIndex: 2, Labels: []string{"eu", "eu"}}}}, `Question 2: "eu" is chosen twice.`},
		{"a select choice not offered", QuestionCall{Method: MethodSelect, Choices: []string{"eu"}}, Reply{Choice: contentOf("us")}, `"us" is not one of the choices.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.call.Answered(tt.reply)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidAnswer || e.Message != tt.message {
				t.Errorf("Answered = %v, want %s %q", err, CodeInvalidAnswer, tt.message)
			}
		})
	}
	var e *Error
	if _, err := (QuestionCall{Method: MethodConfirm}).Cancelled([]Pick{{QuestionIndex: 0, Text: "x"}}); !errors.As(err, &e) || e.Code != CodeInvalidAnswer {
		t.Errorf("Cancelled confirm with answers = %v, want %s", err, CodeInvalidAnswer)
	}
}

func TestCardHeading(t *testing.T) {
	tests := []struct{ question, heading, body string }{
		{"Ship it?", "Ship it?", ""},
		{"1. Ship it?", "1. Ship it?", ""},
		{"Confirm the earlier answers\n\n- Storage: PostgreSQL\n- Rollout: a small pilot", "Confirm the earlier answers", "\n- Storage: PostgreSQL\n- Rollout: a small pilot"},
		{"Title\r\nBody\r\nmore", "Title", "Body\r\nmore"},
		{"Title\n", "Title", ""},
		{"\nBody only", "", "Body only"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if h, b := CardHeading(tt.question); h != tt.heading || b != tt.body {
			t.Errorf("CardHeading(%q) = %q, %q; want %q, %q", tt.question, h, b, tt.heading, tt.body)
		}
	}
}

func TestPlaceAfter(t *testing.T) {
	source := "# Plan\n\nText.\n\n<Decision id=\"d\" />\n\nSame.\n\nSame.\n\nLast.\n"
	blocks := Blocks(source) // 0 heading, 1 Text., 2 decision, 3 Same., 4 Same., 5 Last.
	moved := Blocks("Added above.\n\n" + source)
	tests := []struct {
		name   string
		blocks []Block
		index  int
		digest string
		want   int
	}{
		{"the named block", blocks, 1, blocks[1].Digest, 1},
		{"the last block", blocks, 5, blocks[5].Digest, 5},
		{"a block that only moved", moved, 1, blocks[1].Digest, 2},
		{"the block changed", blocks, 1, Digest("Text, edited."), -1},
		{"its digest now repeats", blocks, 3, blocks[3].Digest, -1},
		{"a decision card", blocks, 2, blocks[2].Digest, -1},
		{"an index out of date and a digest nowhere", blocks, 9, Digest("gone"), -1},
		{"an empty plan", nil, 0, blocks[0].Digest, -1},
	}
	for _, tt := range tests {
		if got := PlaceAfter(tt.blocks, tt.index, tt.digest); got != tt.want {
			t.Errorf("%s: PlaceAfter = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestOutcomeShapes(t *testing.T) {
	// Every questionnaire value has answers as a list, never null.
	o, err := storageCall.Cancelled([]Pick{})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Answers json.RawMessage `json:"answers"`
	}
	raw, _ := json.Marshal(o.Value)
	if err := json.Unmarshal(raw, &v); err != nil || string(v.Answers) != "[]" {
		t.Errorf("answers = %s, %v; want []", v.Answers, err)
	}
	if _, err := (QuestionCall{Method: "poll"}).Answered(Reply{}); err == nil {
		t.Error(fmt.Sprint("Answered accepted method poll"))
	}
}

// TestQuestionCallOf: an input-request's call, as the agent connection
// decoded it, becomes exactly the call its JSON would parse to, and passes
// or fails validation as that would.
func TestQuestionCallOf(t *testing.T) {
	preview := "| a |"
	for _, in := range []wire.Input{
		{Method: wire.MethodQuestionnaire, Params: &wire.QuestionnaireParams{Questions: []wire.QuestionItem{
			{Question: "Which?", Header: "H", MultiSelect: true, Options: []wire.Option{
				{Label: "A", Description: "a", Preview: preview}, {Label: "B", Description: "", Preview: ""}}},
			{Question: "More?", Header: "", Options: []wire.Option{}},
		}}},
		{Method: wire.MethodConfirm, Title: "Ship?", Message: ""},
		{Method: wire.MethodSelect, Title: "Region", Choices: []string{"eu", "us"}},
		{Method: wire.MethodSelect, Title: "Region", Choices: []string{}},
		{Method: wire.MethodInput, Title: "Name", Placeholder: "e.g. Ada"},
		{Method: wire.MethodInput, Title: "Name"},
		{Method: wire.MethodEditor, Title: "Notes", Initial: "- a"},
		{Method: wire.MethodEditor, Title: strings.Repeat("é", 4001)},
	} {
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := ParseQuestionCall(raw)
		got := QuestionCallOf(in)
		if mustJSON(got) != mustJSON(want) || !reflect.DeepEqual(got, want) {
			t.Errorf("QuestionCallOf(%s)\n got %+v\nwant %+v", raw, got, want)
		}
		if err := got.Validate(); fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: Validate = %v, want %v", raw, err, wantErr)
		}
	}
}

// TestSelectLimitOrder: a select with too many choices says so, whatever
// else is wrong with it.
func TestSelectLimitOrder(t *testing.T) {
	call := QuestionCall{Method: MethodSelect, Title: strings.Repeat("x", 4001), Choices: make([]string, 33)}
	var e *Error
	if err := call.Validate(); !errors.As(err, &e) || e.Message != "A select offers at most 32 choices; this one has 33." {
		t.Errorf("Validate = %v", err)
	}
}
