package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

func TestRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := mustRepo(t, s, "octo/plans")
	a := mustChannel(t, s, r.NodeID, "A")
	stage := func(id string, pos int, status string) RunStage {
		return RunStage{ID: id, Position: pos, Body: json.RawMessage(`{"id":"` + id + `","status":"` + status + `"}`)}
	}
	card := json.RawMessage(`{"id":"r1"}`)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SaveRuns(ctx, a.ID, []RunUpdate{{ID: "r1", Card: card, ReplaceStages: true, Stages: []RunStage{stage("a", 0, "running"), stage("b", 1, "pending")}},
		{ID: "r2", Card: json.RawMessage(`{"id":"r2"}`)}}, nil))
	// Only the stages named change; a new one follows.
	must(s.SaveRuns(ctx, a.ID, []RunUpdate{{ID: "r1", Card: json.RawMessage(`{"id":"r1","status":"x"}`), Stages: []RunStage{stage("b", 1, "running"), stage("c", 2, "pending")}}}, nil))
	runs, err := s.Runs(ctx, a.ID)
	must(err)
	got := fmt.Sprintln(len(runs), runs[0].ID, string(runs[0].Card), len(runs[0].Stages), runs[1].ID, len(runs[1].Stages))
	if got != "2 r1 {\"id\":\"r1\",\"status\":\"x\"} 3 r2 0\n" {
		t.Fatalf("runs %s", got)
	}
	if b := string(runs[0].Stages[1].Body); runs[0].Stages[1].ID != "b" || b != `{"id":"b","status":"running"}` || runs[0].Stages[2].ID != "c" {
		t.Errorf("stages %+v", runs[0].Stages)
	}
	// Replacing starts over; deleting takes the stages with it.
	must(s.SaveRuns(ctx, a.ID, []RunUpdate{{ID: "r1", Card: card, ReplaceStages: true, Stages: []RunStage{stage("z", 0, "running")}}}, []string{"r2"}))
	runs, err = s.Runs(ctx, a.ID)
	must(err)
	if len(runs) != 1 || len(runs[0].Stages) != 1 || runs[0].Stages[0].ID != "z" {
		t.Errorf("after replace %+v", runs)
	}
	// A run of no document is not saved.
	if err := s.SaveRuns(ctx, "nope", []RunUpdate{{ID: "r", Card: card}}, nil); err == nil {
		t.Error("saved a run of no document")
	}
}
