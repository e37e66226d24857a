package plannerhost_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
)

// startTurn makes a document with source, attaches a Planner and starts a
// turn with a person's @chopin message; it returns the turn and a browser.
func startTurn(t *testing.T, source string) (*testApp, apptest.Document, *testTurn, *apptest.Room) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	if source != "" {
		apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 0, "source": source}), 200, "")
	}
	browser := ta.DialRoom(ch.ID)
	ts := newTurns()
	ta.attach(ch.ID, ts.handler())
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	return ta, ch, ts.next(t), browser
}

// TestAgentAsk: ask puts a card in front of the people; its answer over HTTP
// is the tool's result, exactly.
func TestAgentAsk(t *testing.T) {
	ta, ch, turn, browser := startTurn(t, "# Plan\n\nWe store data.\n")
	var out json.RawMessage
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, _ = turn.CallTool(turn.ctx, "ask", map[string]any{
			"questions": []any{map[string]any{"question": "Which store?\nWe need durability.", "header": "Store",
				"options": []any{map[string]any{"label": "SQLite", "description": "one file"}, map[string]any{"label": "Postgres", "description": "a server"}}}},
			"block": map[string]any{"index": 1, "digest": room.Digest("We store data.")},
		})
	}()
	card := browser.Until("decision:update")["decision"].(map[string]any)
	if card["status"] != "open" || card["block"] != 1.0 {
		t.Fatalf("card %v", card)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+card["id"].(string)+"/answer", map[string]any{"labels": []string{"SQLite"}}), 200, "")
	<-done
	var got struct {
		Status      string
		Value       json.RawMessage
		CurrentPlan room.CurrentPlan `json:"current_plan"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Status != "answered" || string(got.Value) != `{"answers":[{"questionIndex":0,"question":"Which store?\nWe need durability.","kind":"option","answer":"SQLite"}],"cancelled":false}` {
		t.Errorf("ask result %s", out)
	}
	if got.CurrentPlan.Revision != 2 || got.CurrentPlan.PlanContent == nil || !strings.Contains(got.CurrentPlan.Source, `<Decision id="`+card["id"].(string)+`" />`) {
		t.Errorf("current_plan %+v", got.CurrentPlan)
	}

	// An input-request makes the same Decisions; the answer reaches the client.
	res := make(chan client.Result, 1)
	go func() {
		r, _ := turn.Session.Ask(turn.ctx, wire.Input{Method: wire.MethodConfirm, Title: "Ship it?", Message: "Friday"}, client.AskOptions{})
		res <- r
	}()
	for card["status"] != "open" || card["block"] != -1.0 {
		card = browser.Until("decision:update")["decision"].(map[string]any)
	}
	var open struct {
		Decisions   []room.Decision
		CurrentPlan room.CurrentPlan `json:"current_plan"`
	}
	json.Unmarshal(turn.call(t, "open_decisions", map[string]any{}), &open)
	if len(open.Decisions) != 1 || open.Decisions[0].ID != card["id"] {
		t.Errorf("open_decisions %+v", open.Decisions)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+card["id"].(string)+"/answer", map[string]any{"yes": true}), 200, "")
	if r := <-res; r.Status != "answered" || !r.Yes || string(r.Value) != "true" {
		t.Errorf("input-result %+v", r)
	}
	turn.done <- nil
}

// TestAgentToolErrors: each host tool's refusals reach the Planner as its
// words, and Work details keeps them as structured errors.
func TestAgentToolErrors(t *testing.T) {
	ta, ch, turn, _ := startTurn(t, "# Plan\n\nOne.\n\nTwo.\n")
	turn.call(t, "read_plan", map[string]any{}) // the outline at revision 1

	// Someone edits the plan meanwhile: a batch at revision 1 is stale.
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 1, "source": "# Plan\n\nOne!\n\nTwo.\n"}), 200, "")
	msg := turn.callError(t, "edit_plan", `{"revision":1,"operations":[{"op":"delete","index":2}]}`)
	if !strings.HasPrefix(msg, "The plan is at revision 2, not 1") || !strings.Contains(msg, "\nrevision: 2\nchanged: 1\noutline: 3 blocks (index type lines digest)\n0 heading 1-1 sha256:") ||
		!strings.Contains(msg, "\n1 paragraph 3-3 "+room.Digest("One!")) {
		t.Errorf("stale: %q", msg)
	}
	// Reserved components, bad arguments, bad pages.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "note"}), 201, "")
	for _, tc := range []struct{ tool, input, prefix string }{
		{"edit_plan", `{"revision":2,"operations":[{"op":"insert_root","content":"<Decision id=\"x\" />"}]}`, ""},
		{"edit_plan", `{"revision":2,"operations":[{"op":"delete","index":0},{"op":"delete","index":1},{"op":"delete","index":2}]}`, "This batch would leave the plan with no content."},
		{"edit_plan", `{"revision":2,"operations":[],"extra":1}`, "edit_plan takes"},
		{"read_plan", `{"offset":-1}`, "offset is a 1-based line number"},
		{"read_plan", `{"ofset":2}`, "read_plan takes"},
		{"ask", `{"questions":[]}`, "A questionnaire has 1 to 16 questions"},
		{"open_decisions", `{"x":1}`, "open_decisions takes no arguments"},
		{"nope", `{}`, "nope is not one of this turn's tools."},
		{"read_plan", `not json`, "The input of read_plan is not valid JSON."},
	} {
		if msg := turn.callError(t, tc.tool, tc.input); tc.prefix != "" && !strings.HasPrefix(msg, tc.prefix) {
			t.Errorf("%s %s: %q", tc.tool, tc.input, msg)
		}
	}
	turn.done <- nil

	reply := ta.finishedReply(ch.ID)
	var details room.ReplyDetails
	json.Unmarshal(reply.Details, &details)
	if len(details.Tools) != 11 {
		t.Fatalf("%d tool rows: %+v", len(details.Tools), details.Tools)
	}
	stale := details.Tools[1]
	if stale.Status != "failed" || stale.Error == nil || stale.Error.Code != "stale-revision" || stale.Error.Kind != "StaleRevision" {
		t.Errorf("stale row %+v", stale)
	}
	if r := details.Tools[2]; r.Error == nil || r.Error.Code != "reserved-component" {
		t.Errorf("reserved row %+v", r)
	}
}

// TestAgentReadPlanPaging: a plan at the size limit, with lines far longer
// than one result, comes back exactly by following each next: line.
func TestAgentReadPlanPaging(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Big\n\n")
	for i := 0; b.Len() < room.MaxSourceBytes-50_000; i++ {
		fmt.Fprintf(&b, "Paragraph %d: %s\n\n", i, strings.Repeat("é and 🎼 ", 40+i%700))
	}
	b.WriteString(strings.Repeat("long line without end ", (room.MaxSourceBytes-b.Len()-10)/22) + "\n")
	source := b.String()
	if len(source) > room.MaxSourceBytes || len(source) < room.MaxSourceBytes-100 {
		t.Fatalf("source is %d bytes", len(source))
	}
	_, _, turn, _ := startTurn(t, source)

	next := regexp.MustCompile(`(?m)^next: read_plan (\{.*\})$`)
	var got strings.Builder
	input := "{}"
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		out, err := turn.CallToolID(turn.ctx, "p"+strconv.Itoa(pages), "read_plan", input)
		if err != nil {
			t.Fatal(err)
		}
		var text string
		json.Unmarshal(out, &text)
		if len(text) > room.ReadBudget {
			t.Fatalf("page %d is %d bytes", pages, len(text))
		}
		head, body, ok := strings.Cut(text, "\ntext:\n")
		if !ok {
			t.Fatalf("page %d: %q", pages, text)
		}
		got.WriteString(body)
		m := next.FindStringSubmatch(head)
		if m == nil {
			if !strings.Contains(head, "next: none, this is the end of the document") {
				t.Fatalf("page %d head %q", pages, head)
			}
			break
		}
		input = m[1]
	}
	if got.String() != source {
		t.Errorf("reassembled %d bytes, want %d", got.Len(), len(source))
	}
	turn.done <- nil
}

// finishedReply waits for the document's last Planner reply to end and
// returns it as stored.
func (ta *testApp) finishedReply(channelID string) room.Message {
	ta.T.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for time.Now().Before(deadline) {
		var list struct{ Messages []room.Message }
		ta.Do("GET", "/api/channels/"+channelID+"/messages", nil).JSON(ta.T, &list)
		for i := len(list.Messages) - 1; i >= 0; i-- {
			if m := list.Messages[i]; m.Role == room.RolePlanner && m.Status != room.ReplyStreaming {
				// A long reply is listed cut: read it whole.
				ta.Do("GET", "/api/channels/"+channelID+"/messages/"+m.ID, nil).JSON(ta.T, &m)
				return m
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	ta.T.Fatal("the reply did not end")
	return room.Message{}
}

// TestAgentRuns: a session's runs report becomes run cards on the room and
// over HTTP; when the link closes, its live runs show as stopped.
func TestAgentRuns(t *testing.T) {
	ta, ch, turn, browser := startTurn(t, "")
	card := wire.RunCard{ID: "run-1", Name: "Build", Status: "running", Started: 1, Updated: 2,
		Stages: []wire.Stage{{ID: "st-1", Name: "compile", Status: "running"}}}
	if err := turn.Session.ReportRuns([]string{"run-1"}, nil, []wire.RunCard{card}); err != nil {
		t.Fatal(err)
	}
	runs := browser.Until("planner:runs")["runs"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["status"] != "running" || runs[0].(map[string]any)["name"] != "Build" {
		t.Errorf("planner:runs %v", runs)
	}
	var p plannerhost.Status
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &p)
	if len(p.Runs) != 1 || p.Runs[0].ID != "run-1" || len(p.Runs[0].Stages) != 1 {
		t.Errorf("planner %+v", p)
	}
	turn.done <- nil
	turn.Session.Link().Close() // dropped: the live run stops
	for {
		runs = browser.Until("planner:runs")["runs"].([]any)
		if runs[0].(map[string]any)["status"] == "stopped" {
			break
		}
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &p)
	if p.State != "grace" || len(p.Runs) != 1 || p.Runs[0].Status != "stopped" || len(p.Runs[0].Stages) != 1 {
		t.Errorf("after close %+v", p)
	}
}
