package planner_test

// An isolated session's turn (spec/agent-connection.md "Server to client"):
// no tools, the JSON response format through structured output, JSON mode
// when the model server refuses a schema, and an answer that is not the
// JSON failing the turn.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/planner"
)

var descriptionFormat = &wire.ResponseFormat{Type: "json", Name: "document description",
	Schema: json.RawMessage(`{"type":"object","properties":{"description":{"type":"string"}},"required":["description"],"additionalProperties":false}`)}

func (c *chopin) isolatedTurn(t *testing.T) *sink {
	t.Helper()
	s := &sink{events: make(chan any, 1000)}
	err := c.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{
		Mode: wire.ModeIsolated, Prompt: "# Storage plan", Instructions: "Describe the document.",
		Tools: hostTools, ResponseFormat: descriptionFormat, Sink: s,
	})
	if err != nil {
		t.Fatalf("StartTurn: %v", err)
	}
	return s
}

func turnText(events []any) string {
	var b strings.Builder
	for _, ev := range events {
		if p, ok := ev.(wire.StreamPart); ok && p.Type == wire.PartTextDelta {
			b.WriteString(p.Delta)
		}
	}
	return b.String()
}

func TestIsolatedTurnAnswersTheSchemasJSON(t *testing.T) {
	cases := []struct {
		name      string
		schemaOK  bool   // the model server takes json_schema
		answer    string // what the model says
		status    string
		wantFmts  []string
		wantError string
	}{
		{"structured output", true, `{"description":"Plan for storage"}`, "finished", []string{"json_schema"}, ""},
		{"JSON mode fallback", false, `{"description":"Plan for storage"}`, "finished", []string{"json_schema", "json_object"}, ""},
		{"not JSON", false, `Plan for storage`, "failed", []string{"json_schema", "json_object"}, "not the JSON"},
		{"JSON outside the schema", false, `{"summary":"Plan"}`, "failed", []string{"json_schema", "json_object"}, "does not fit the schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model := newFakeModel(t, func(w http.ResponseWriter, _ *http.Request, req planner.ChatRequest) {
				var f struct{ Type string }
				_ = json.Unmarshal(req.ResponseFormat, &f)
				if f.Type == "json_schema" && !tc.schemaOK {
					http.Error(w, `{"error":{"message":"response_format json_schema is not supported"}}`, http.StatusBadRequest)
					return
				}
				sse(w, textChunk(tc.answer), finishChunk("stop"), "[DONE]")
			})
			c := newChopin(t)
			p, _, _ := newPlanner(t, model.baseURL(), "qwen2.5")
			serve(t, c, p, docURL)
			c.waitState(t, agentconn.PlannerAttached)

			events, outcome := c.isolatedTurn(t).until(t)
			if outcome.Status != tc.status || !strings.Contains(outcome.Message, tc.wantError) {
				t.Fatalf("outcome = %+v, want %s with %q", outcome, tc.status, tc.wantError)
			}
			if got := turnText(events); got != tc.answer {
				t.Errorf("text = %q", got)
			}
			reqs := model.recorded()
			var fmts []string
			for _, r := range reqs {
				var f struct{ Type string }
				_ = json.Unmarshal(r.Req.ResponseFormat, &f)
				fmts = append(fmts, f.Type)
				if len(r.Req.Tools) != 0 {
					t.Errorf("an isolated turn offered the model %d tools", len(r.Req.Tools))
				}
			}
			if strings.Join(fmts, " ") != strings.Join(tc.wantFmts, " ") {
				t.Errorf("response formats = %v, want %v", fmts, tc.wantFmts)
			}
		})
	}
}

// TestIsolatedTurnBesideAChatTurn: a background job's isolated turn runs
// while the Chat session's turn runs, and neither refuses the other.
func TestIsolatedTurnBesideAChatTurn(t *testing.T) {
	release := make(chan struct{})
	model := newFakeModel(t, func(w http.ResponseWriter, _ *http.Request, req planner.ChatRequest) {
		if len(req.ResponseFormat) == 0 {
			<-release // the Chat turn waits until the isolated one ended
			sse(w, textChunk("Done."), finishChunk("stop"), "[DONE]")
			return
		}
		sse(w, textChunk(`{"description":"Plan for storage"}`), finishChunk("stop"), "[DONE]")
	})
	c := newChopin(t)
	p, _, _ := newPlanner(t, model.baseURL(), "qwen2.5")
	serve(t, c, p, docURL)
	c.waitState(t, agentconn.PlannerAttached)

	chat := c.startTurn(t, "")
	if _, o := c.isolatedTurn(t).until(t); o.Status != "finished" {
		t.Fatalf("isolated outcome = %+v", o)
	}
	if !c.srv.Busy("doc1") {
		t.Error("the Chat turn does not count as busy")
	}
	close(release)
	if _, o := chat.until(t); o.Status != "finished" {
		t.Fatalf("chat outcome = %+v", o)
	}
}
