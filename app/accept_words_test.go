package app

// What a person reads around Accept on a comment: never the agent
// protocol's refusal (it speaks of machines and agent clients), and never
// the machine prompt as their own message.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// TestCommentAcceptWordsWithoutPlanner: the record's result says, in
// Chopin's words, to connect a Planner.
func TestCommentAcceptWordsWithoutPlanner(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	rev := ta.putPlan(t, ch.ID, 0, commentPlan)
	body := newThreadFor(t, commentPlan, rev, "None yet.", "Name one.")
	delete(body, "type")
	delete(body, "id")
	var th room.Thread
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/comments", body)
	apptest.Want(t, r, 201, "")
	r.JSON(t, &th)
	r = ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+th.ID+"/accept", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &th)
	msg := th.Result.Message
	if strings.Contains(msg, "machine") || strings.Contains(msg, "agent client") || !strings.Contains(msg, "Connect a Planner") {
		t.Errorf("the record says %q", msg)
	}
}

// TestCommentAcceptChatLine: the message an Accept posts carries the
// prompt for the Planner and, in its details, what Chat shows instead: the
// thread and the section it was on.
func TestCommentAcceptChatLine(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	rev := ta.putPlan(t, ch.ID, 0, commentPlan)
	browser := ta.DialRoom(ch.ID)
	model := newCommentModel(t, "None yet.", "Late fuel.")
	cli := runPlanner(t, ta.plannerEnv(&fakeModelServer{ts: model.ts}), ta.app.URL()+ch.URL, "--model", "qwen2.5")
	defer func() { cli.cancel(); cli.wait(t) }()
	for browser.Until("planner:status")["planner"].(map[string]any)["state"] != "attached" {
	}
	browser.Send(newThreadFor(t, commentPlan, rev, "None yet.", "Name one."))
	id := browser.Until("comment:started")["thread"].(string)
	browser.Send(map[string]any{"type": "comment:accept", "id": "a", "thread": id})
	var m map[string]any
	for {
		m = browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "person" {
			break
		}
	}
	raw, _ := json.Marshal(m["details"])
	var d struct {
		Comment struct{ Thread, Section string }
	}
	if err := json.Unmarshal(raw, &d); err != nil || d.Comment.Thread != id || d.Comment.Section != "Risks" {
		t.Errorf("the accept message's details: %s", raw)
	}
	if m["author"] != "ada" || !strings.Contains(m["text"].(string), "revise exactly this passage") {
		t.Errorf("the accept message: %v", m)
	}
}
