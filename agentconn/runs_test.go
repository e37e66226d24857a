package agentconn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

func TestRunsKeepSessionAndControl(t *testing.T) {
	q := newQuestionLink(t)
	card := func(status, extra string) string {
		return `{"id":"run1","name":"Build","status":"` + status + `","started":100,"updated":110` + extra + `,"stages":[{"id":"a","name":"Plan","status":"completed"}],"waiting":0}`
	}
	writeJSON(t, q.c, `{"type":"runs","session":"`+q.session+`","active":["run1"],"paused":[],"cards":[`+card("running", "")+`]}`)
	rep := recv(t, q.h.host.runs)
	if rep.Document != "doc1" || rep.Session != q.session || len(rep.Cards) != 1 || rep.Cards[0].Status != "running" || rep.Closed {
		t.Errorf("report = %+v", rep)
	}
	if st := q.h.srv.Status("doc1"); len(st.Runs) != 1 || st.Runs[0].ID != "run1" || len(st.Runs[0].Stages) != 1 {
		t.Errorf("status runs = %+v", st.Runs)
	}
	writeJSON(t, q.c, `{"type":"turn-end","session":"`+q.session+`","turn":"`+q.turn+`","status":"finished"}`)
	q.sink.until(t)
	q.sync() // live runs keep the session: no destroy

	// Stop Planner pauses the session's runs and waits for the answer.
	done := make(chan agentconn.ControlOutcome, 1)
	go func() {
		out, err := q.h.srv.Stop(context.Background(), "doc1", "run1")
		must(t, err)
		done <- out
	}()
	var stop wire.Stop
	decodeServer(t, readFrame(t, q.c), &stop)
	if stop.Session != q.session || stop.Run != "run1" {
		t.Errorf("stop = %+v", stop)
	}
	writeJSON(t, q.c, `{"type":"control-result","request":"`+stop.Request+`","ok":false,"message":"run1 has already ended."}`)
	out := recv(t, done)
	if out.Aborted || len(out.Results) != 1 || !out.Results[0].Answered || out.Results[0].OK || out.Results[0].Message != "run1 has already ended." {
		t.Errorf("outcome = %+v", out)
	}

	// A finished card is finished only with ended; then the session goes.
	writeJSON(t, q.c, `{"type":"runs","session":"`+q.session+`","active":[],"paused":[],"cards":[`+card("finished", "")+`]}`)
	recv(t, q.h.host.runs)
	q.sync()
	writeJSON(t, q.c, `{"type":"runs","session":"`+q.session+`","active":[],"paused":[],"cards":[`+card("finished", `,"ended":120`)+`]}`)
	recv(t, q.h.host.runs)
	q.expect(`{"type":"destroy","session":"` + q.session + `"}`)
}

func TestRunsStoppedOnClose(t *testing.T) {
	q := newQuestionLink(t)
	writeJSON(t, q.c, `{"type":"runs","session":"`+q.session+`","active":["r1"],"paused":[],"cards":[`+
		`{"id":"r1","name":"Build","status":"running","started":1,"updated":2,"stages":[{"id":"a","name":"a","status":"running"}],"waiting":0},`+
		`{"id":"r0","name":"Old","status":"failed","started":1,"updated":2,"stages":[],"waiting":0}]}`)
	recv(t, q.h.host.runs)
	_ = q.c.Close()
	rep := recv(t, q.h.host.runs)
	want := wire.RunCard{ID: "r1", Name: "Build", Status: "stopped", Started: 1, Updated: q.h.now.Unix(), Stages: []wire.Stage{}}
	if !rep.Closed || len(rep.Cards) != 1 || fmt.Sprint(rep.Cards[0]) != fmt.Sprint(want) {
		t.Errorf("closing report = %+v", rep)
	}
}

func TestRunsLimits(t *testing.T) {
	q := newQuestionLink(t)
	cards := make([]string, 65)
	for i := range cards {
		cards[i] = fmt.Sprintf(`{"id":"r%d","name":"n","status":"running","started":0,"updated":0,"stages":[],"waiting":0}`, i)
	}
	writeJSON(t, q.c, `{"type":"runs","session":"`+q.session+`","active":[],"paused":[],"cards":[`+strings.Join(cards, ",")+`]}`)
	expectClose(t, q.c, `{"type":"error","code":"malformed-message","message":"The message is malformed: runs: cards has 65 cards; a report has at most 64."}`, 1008, "malformed-message")
}

// TestReportRunsSplit sends a report too large for one frame through the
// client, which splits it into a full part and delta parts.
func TestReportRunsSplit(t *testing.T) {
	for _, deltas := range []bool{false, true} {
		t.Run(fmt.Sprintf("deltas=%v", deltas), func(t *testing.T) {
			h := newHarness(t)
			var features []string
			if deltas {
				features = []string{"run-stage-deltas"}
			}
			stages := make([]wire.Stage, 300)
			for i := range stages {
				stages[i] = wire.Stage{ID: fmt.Sprintf("s%d", i), Name: strings.Repeat("n", 3999) + "!", Status: "completed"}
			}
			reported := make(chan error, 1)
			h.dial(t, client.Config{Features: features, Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
				reported <- tr.Session.ReportRuns([]string{"r1"}, nil, []wire.RunCard{{ID: "r1", Name: "Big", Status: "running", Stages: stages}})
				return nil
			}}})
			must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: newSink()}))
			must(t, recv(t, reported))
			// Count the parts as the host hears them, up to the one that
			// carries the last stage; then the status has the whole card.
			parts := 0
			for last := false; !last; {
				r := recv(t, h.host.runs)
				parts++
				for _, c := range r.Cards {
					last = last || len(c.Stages) > 0 && c.Stages[len(c.Stages)-1].ID == "s299"
				}
			}
			st := h.srv.Status("doc1")
			if len(st.Runs) != 1 || deltas && len(st.Runs[0].Stages) != 300 || !deltas && len(st.Runs[0].Stages) != 64 {
				t.Fatalf("status after the last part: %d runs", len(st.Runs))
			}
			if !deltas && *st.Runs[0].EarlierStages != 236 {
				t.Errorf("earlierStages = %d", *st.Runs[0].EarlierStages)
			}
			if deltas && parts < 2 {
				t.Errorf("a 1.2 MB report arrived in %d parts", parts)
			}
		})
	}
}
