package app

// chopin planner --acp's permission requests, with the fake ACP agent of
// acp_test.go: a request for one of Chopin's own host tools is allowed by
// the bridge without a card; one for the agent's own tool is a Decision
// that names the tool and what it will do, lives in Decisions and Chat
// only (no line in the plan, so the plan's revision does not move and the
// edit the agent makes next is not stale), and "Allow always" holds for
// the rest of the ACP session. An answer that is none of the agent's
// options cancels.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// plannerReply waits for the Planner's reply to end, and returns it.
func plannerReply(browser *apptest.Room) map[string]any {
	for {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" && m["status"] != "streaming" {
			return m
		}
	}
}

// answerOverSocket answers a card as a person in the tab does.
func answerOverSocket(t testing.TB, browser *apptest.Room, id string, answer map[string]any) {
	t.Helper()
	browser.Send(map[string]any{"type": "decision:answer", "id": "answer-" + id, "decision": id, "answer": answer})
	for {
		m := browser.Next()
		if m["id"] == "answer-"+id {
			if m["type"] != "ok" {
				t.Fatalf("answer %s: %v", id, m)
			}
			return
		}
	}
}

// permissionCard is the card of a permission request: its question and
// header, and where it is placed.
type permissionCard struct {
	ID    string
	Block int
	Call  struct {
		Params struct {
			Questions []struct {
				Question, Header string
				Options          []struct{ Label, Description string }
			}
		}
	}
}

func nextPermissionCard(t *testing.T, browser *apptest.Room) permissionCard {
	t.Helper()
	raw, _ := json.Marshal(browser.Until("decision:update")["decision"])
	var c permissionCard
	if err := json.Unmarshal(raw, &c); err != nil || len(c.Call.Params.Questions) != 1 {
		t.Fatalf("decision %s: %v", raw, err)
	}
	return c
}

func TestACPPlannerPermissions(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	cli := ta.runACPPlanner(t, "script", ta.app.URL()+ch.URL)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("planner stdout:\n%s\nstderr:\n%s", cli.stdout, cli.stderr)
		}
	})
	ta.waitAttached(browser, ch.ID)

	// The agent asks for read_plan (allowed by the bridge, no card), reads
	// the plan at revision 0, asks to run a command (a card), asks for
	// edit_plan (allowed), and edits at revision 0.
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin edit after permission"})
	card := nextPermissionCard(t, browser)
	q := card.Call.Params.Questions[0]
	if !strings.Contains(q.Question, "run a command") || !strings.Contains(q.Question, "npm test") || q.Header != "Permission" {
		t.Fatalf("the first card is not the command's: %+v", q)
	}
	if card.Block != -2 {
		t.Errorf("the card's block is %d, want %d (not in the plan)", card.Block, -2)
	}
	var labels []string
	for _, o := range q.Options {
		labels = append(labels, o.Label+" ("+o.Description+")")
	}
	if got := strings.Join(labels, ", "); got != "Always Allow (allow always, for the rest of this agent session), Allow (allow once), Reject (reject once)" {
		t.Errorf("options: %s", got)
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Revision != 0 || strings.Contains(plan.Source, "<Decision") {
		t.Errorf("asking moved the plan to revision %d:\n%s", plan.Revision, plan.Source)
	}
	answerOverSocket(t, browser, card.ID, map[string]any{"labels": []string{"Allow"}})
	if r := plannerReply(browser); r["text"] != "host: allow, own: allow, edited" {
		t.Errorf("reply %v", r)
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Launch\n\n## Tests\n\nnpm test passes.\n" || plan.Revision != 1 {
		t.Errorf("plan at revision %d:\n%s", plan.Revision, plan.Source)
	}
	// Chat says the Planner waits on the question.
	msgs := ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil)
	if !strings.Contains(string(msgs.Body), "waits for an answer in Decisions") || !strings.Contains(string(msgs.Body), "npm test") {
		t.Errorf("Chat does not name the question: %s", msgs.Body)
	}

	// "Always Allow" holds for the session: the same command asked again is
	// answered by the bridge with the same option, without a card.
	browser.Send(map[string]any{"type": "chat:send", "id": "m2", "text": "@chopin run the tests twice"})
	card = nextPermissionCard(t, browser)
	answerOverSocket(t, browser, card.ID, map[string]any{"labels": []string{"Always Allow"}})
	if r := plannerReply(browser); r["text"] != "first: allow_always, second: allow_always" {
		t.Errorf("reply %v", r)
	}
	var list struct{ Decisions []room.Decision }
	ta.Do("GET", "/api/channels/"+ch.ID+"/decisions", nil).JSON(t, &list)
	if len(list.Decisions) != 2 {
		t.Errorf("%d cards, want 2: %+v", len(list.Decisions), list.Decisions)
	}

	// A written answer is none of the agent's options: the request is
	// cancelled, never allowed.
	browser.Send(map[string]any{"type": "chat:send", "id": "m3", "text": "@chopin may I"})
	card = nextPermissionCard(t, browser)
	resp := ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+card.ID+"/answer", map[string]any{"text": "Allow, but only main.go"})
	if resp.Status != http.StatusOK {
		t.Fatalf("answer: %d %s", resp.Status, resp.Body)
	}
	if r := plannerReply(browser); r["text"] != "Permission: cancelled" {
		t.Errorf("after a written answer %v", r)
	}
	cli.stop(t)
}
