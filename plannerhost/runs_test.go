package plannerhost_test

import (
	"fmt"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/plannerhost"
)

func stageNames(c wire.RunCard) string {
	s := ""
	for _, st := range c.Stages {
		s += st.ID + ":" + st.Status + " "
	}
	return s
}

// TestAgentRunsStored: run cards keep every stage as "Run stage deltas"
// merges them (a delta adds or replaces by id and never removes; a full
// card with no stages keeps them; earlierStages stays from the last full
// card), and they survive a restart.
func TestAgentRunsStored(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	browser := ta.DialRoom(ch.ID)
	ts := newTurns()
	l := ta.attachFeatures(ch.ID, ts.handler(), "run-stage-deltas")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	turn := ts.next(t)
	three := 3
	send := func(cards ...wire.RunCard) {
		t.Helper()
		if err := l.Send(wire.Runs{Session: turn.Session.ID, Active: []string{"run-1"}, Paused: []string{}, Cards: cards}); err != nil {
			t.Fatal(err)
		}
		browser.Until("planner:runs")
	}
	stage := func(id, status string) wire.Stage { return wire.Stage{ID: id, Name: id, Status: status} }
	send(wire.RunCard{ID: "run-1", Name: "Build", Status: "running", Started: 1, Updated: 2, EarlierStages: &three,
		Stages: []wire.Stage{stage("a", "completed"), stage("b", "running")}})
	send(wire.RunCard{ID: "run-1", Name: "Build", Status: "running", Started: 1, Updated: 3, StagesDelta: true,
		Stages: []wire.Stage{stage("c", "pending"), stage("b", "failed"), stage("c", "running")}})
	send(wire.RunCard{ID: "run-1", Name: "Build", Status: "running", Started: 1, Updated: 4, StagesDelta: true, Stages: []wire.Stage{}})
	end := int64(9)
	send(wire.RunCard{ID: "run-1", Name: "Build", Status: "finished", Started: 1, Updated: 9, Ended: &end, Stages: []wire.Stage{}})

	check := func(when string) {
		t.Helper()
		var p plannerhost.Status
		ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &p)
		if len(p.Runs) != 1 {
			t.Fatalf("%s: runs %+v", when, p.Runs)
		}
		c := p.Runs[0]
		got := fmt.Sprint(c.Status, " ", c.Updated, " ", stageNames(c), *c.EarlierStages)
		if got != "finished 9 a:completed b:failed c:running 3" {
			t.Errorf("%s: card %s", when, got)
		}
	}
	check("attached")
	turn.done <- nil
	ta.Stop()

	ta = startAppWith(t, cfg)
	check("after a restart")

	// A full card with stages replaces them all.
	ts = newTurns()
	l = ta.attachFeatures(ch.ID, ts.handler(), "run-stage-deltas")
	browser = ta.DialRoom(ch.ID)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin again"}), 201, "")
	turn = ts.next(t)
	send(wire.RunCard{ID: "run-1", Name: "Build", Status: "running", Started: 1, Updated: 10, Stages: []wire.Stage{stage("x", "running")}})
	var p plannerhost.Status
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &p)
	if len(p.Runs) != 1 || stageNames(p.Runs[0]) != "x:running " || p.Runs[0].EarlierStages != nil {
		t.Errorf("replaced: %+v", p.Runs)
	}
	turn.done <- nil
}
