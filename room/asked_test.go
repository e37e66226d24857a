package room

import (
	"strings"
	"testing"
)

// Chat's line for a question call names what the Planner asked: the first
// line of each question, at most three of them, long ones cut.
func TestAskedLine(t *testing.T) {
	q := func(texts ...string) QuestionCall {
		c := QuestionCall{Method: MethodQuestionnaire}
		for _, s := range texts {
			c.Questions = append(c.Questions, Question{Question: s, Header: "H"})
		}
		return c
	}
	long := strings.Repeat("é", 100)
	for _, tc := range []struct {
		call QuestionCall
		want string
	}{
		{q("Which store?\nWe need **durability**."), "The Planner asked a question and waits for an answer in Decisions: “Which store?”."},
		{q("\n  A?  ", "B?", "C?", "D?", "E?"), "The Planner asked 5 questions and waits for answers in Decisions: “A?”, “B?”, “C?” and 2 more."},
		{q(long), "The Planner asked a question and waits for an answer in Decisions: “" + strings.Repeat("é", 79) + "…”."},
		{QuestionCall{Method: MethodConfirm, Title: "Run the migration?", Message: "It takes a minute."}, "The Planner asked a question and waits for an answer in Decisions: “Run the migration?”."},
	} {
		if got := AskedLine(tc.call); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
