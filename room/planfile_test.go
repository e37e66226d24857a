package room

import (
	"encoding/json"
	"testing"
)

// --decisions=inline: each card's line becomes its question and answer.
func TestInlineDecisions(t *testing.T) {
	yes := true
	call := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	questionnaire := call(map[string]any{"method": "questionnaire", "params": map[string]any{"questions": []map[string]any{
		{"question": "Which database?", "header": "DB", "options": []map[string]any{{"label": "SQLite", "description": ""}, {"label": "Postgres", "description": ""}}},
	}}})
	ds := []Decision{
		{ID: "a", Call: questionnaire, Index: 0, Status: DecisionAnswered, Answer: &CardAnswer{Labels: []string{"SQLite"}}, AnsweredBy: "ada"},
		{ID: "b", Call: call(map[string]any{"method": "confirm", "title": "Ship it?", "message": "Friday."}), Status: DecisionAnswered, Answer: &CardAnswer{Yes: &yes}, AnsweredBy: "bo"},
		{ID: "c", Call: call(map[string]any{"method": "input", "title": "Codename?"}), Status: DecisionOpen},
	}
	source := "# Plan\n\n<Decision id=\"a\" />\n\n<Decision id=\"b\" />\n\n<Decision id=\"c\" />\n\n<Decision id=\"gone\" />\n"
	want := "# Plan\n\n> **Decision:** Which database?\n>\n> **Answer:** SQLite (@ada)\n\n" +
		"> **Decision:** Ship it?\n> Friday.\n>\n> **Answer:** Yes (@bo)\n\n" +
		"> **Decision:** Codename?\n>\n> _Not answered yet._\n\n<Decision id=\"gone\" />\n"
	if got := InlineDecisions(source, ds); got != want {
		t.Errorf("InlineDecisions =\n%s\nwant\n%s", got, want)
	}
}

// A file is CRLF only when every line break is; mixed endings are read as
// "\n" throughout.
func TestReadPlanFileLineEndings(t *testing.T) {
	for in, want := range map[string]LineEnding{
		"# A\r\nb\r\n": CRLF,
		"# A\nb\n":     LF,
		"# A\r\nb\n":   LF,
		"# A\rb\r\n":   LF,
		"\uFEFF# A\n":  LF,
	} {
		f, err := ReadPlanFile([]byte(in))
		if err != nil || f.LineEnding != want || f.Title != "A" {
			t.Errorf("ReadPlanFile(%q) = %+v, %v; want %s", in, f, err, want)
		}
	}
}
