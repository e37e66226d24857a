package room

import (
	"context"
	"encoding/json"
	"strings"
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
		{ID: "a", Call: questionnaire, Index: 0, Status: DecisionDecided, Answer: &CardAnswer{Labels: []string{"SQLite"}}, AnsweredBy: "ada"},
		{ID: "b", Call: call(map[string]any{"method": "confirm", "title": "Ship it?", "message": "Friday."}), Status: DecisionDecided, Answer: &CardAnswer{Yes: &yes}, AnsweredBy: "bo"},
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

// Every status reads in the record: a decided card under its earlier
// answers (the specification's Previous), a reopened one, discarded ones
// with and without an answer, an expired one.
func TestInlineDecisionStatuses(t *testing.T) {
	call, _ := json.Marshal(map[string]any{"method": "input", "title": "Codename?"})
	prev := []PreviousAnswer{{Answer: CardAnswer{Text: "Falcon"}, AnsweredBy: "ada", ReopenedBy: "bo"}}
	for _, c := range []struct {
		d    Decision
		want string
	}{
		{Decision{Status: DecisionDecided, Answer: &CardAnswer{Text: "Heron"}, AnsweredBy: "cy", Previous: prev},
			"> **Answer:** Heron (@cy)\n>\n> **Previous:** Falcon (@ada), reopened by @bo"},
		{Decision{Status: DecisionReopened, Previous: prev},
			"> _Reopened by @bo; not answered again yet._\n>\n> **Previous:** Falcon (@ada), reopened by @bo"},
		{Decision{Status: DecisionDiscarded, Answer: &CardAnswer{Text: "Heron"}, AnsweredBy: "cy", DiscardedBy: "bo"},
			"> **Answer:** Heron (@cy)\n>\n> _Discarded by @bo._"},
		{Decision{Status: DecisionDiscarded, DiscardedBy: "bo"}, "> _Discarded by @bo without an answer._"},
		{Decision{Status: DecisionExpired}, "> _Expired without an answer._"},
	} {
		c.d.ID, c.d.Call = "x", call
		want := "> **Decision:** Codename?\n>\n" + c.want
		if got := InlineDecisions(`<Decision id="x" />`, []Decision{c.d}); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", c.d.Status, got, want)
		}
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
		f, err := ReadPlanFile(context.Background(), []byte(in), nil)
		if err != nil || f.LineEnding != want || f.Title != "A" {
			t.Errorf("ReadPlanFile(%q) = %+v, %v; want %s", in, f, err, want)
		}
	}
}

// heldMap is the records a test's Chopin holds.
type heldMap struct {
	decisions map[string]Decision
	threads   map[string]Thread
}

func (h heldMap) Decision(_ context.Context, id string) (Decision, bool, error) {
	d, ok := h.decisions[id]
	return d, ok, nil
}

func (h heldMap) Thread(_ context.Context, id string) (Thread, bool, error) {
	t, ok := h.threads[id]
	return t, ok, nil
}

// A file's record lines come in as the text an inline export writes for
// them; a record that text would hold a mark in is written so it reads the
// same and is no mark.
func TestReadPlanFileWritesRecordsAsText(t *testing.T) {
	call, _ := json.Marshal(map[string]any{"method": "input", "title": "Keep the <Decision /> lines?"})
	held := heldMap{
		decisions: map[string]Decision{"d1": {ID: "d1", Call: call, Status: DecisionDecided, Answer: &CardAnswer{Text: "Yes, <Comment id=\"x\" /> too"}, AnsweredBy: "ada"}},
		threads: map[string]Thread{"c1": {ID: "c1", Status: ThreadAccepted, DecidedBy: "bo", Passage: Passage{Quote: "Use SQLite."},
			Notes: []CommentNote{{Author: "bo", Text: "Why?\nOne file."}}}},
	}
	file := "# Plan\r\n\r\nUse SQLite.\r\n\r\n<Comment id=\"c1\" />\r\n\r\n<Decision id=\"d1\" />\r\n"
	f, err := ReadPlanFile(context.Background(), []byte(file), held)
	want := "# Plan\n\nUse SQLite.\n\n> **Accepted comment** (@bo) on: Use SQLite.\n>\n> @bo: Why?\n> One file.\n\n" +
		"> **Decision:** Keep the &lt;Decision /> lines?\n>\n> **Answer:** Yes, &lt;Comment id=\"x\" /> too (@ada)\n"
	if err != nil || f.Source != want || f.Records != 2 || f.LineEnding != CRLF {
		t.Fatalf("ReadPlanFile = %+v, %v\nwant source %q", f, err, want)
	}
	if err := CheckReserved("# Plan\n", f.Source); err != nil {
		t.Errorf("the records' text is refused as marks: %v", err)
	}
	// Without the records: each line refused in its own words.
	_, err = ReadPlanFile(context.Background(), []byte(file), nil)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, w := range []string{
		"line 5: <Comment id=\"c1\" /> is the mark of an accepted comment that this Chopin does not hold",
		"line 7: <Decision id=\"d1\" /> is the mark of a decision card that this Chopin does not hold",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q lacks %q", msg, w)
		}
	}
}
