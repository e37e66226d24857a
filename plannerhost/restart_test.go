package plannerhost_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// A document's chosen model and level are saved with it: after a restart
// the room's chat:model still names the saved choice and its model name,
// and the next client's turn runs it.
func TestModelChoiceSurvivesRestart(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	ts := newTurns()
	link := ta.attachWith(ch.ID, []string{"capability-catalog"}, ts.handler())
	catalog := json.RawMessage(`{"models":{"available":[{"id":"m1","name":"Model One","thinkingLevels":["low","high"]},{"id":"m2","name":"Model Two"}],"default":{"id":"m2"}}}`)
	if err := link.ReportCapabilities(catalog); err != nil {
		t.Fatal(err)
	}
	modelUntil(ta.DialRoom(ch.ID), func(m map[string]any) bool { return m["offered"] == true })
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/planner/model", map[string]string{"model": "m1", "thinkingLevel": "high"}), 200, "")
	ta.Stop()

	ta = startAppWith(t, ta.app.Config())
	var st map[string]any
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner/model", nil).JSON(t, &st)
	if st["offered"] != false || st["model"] != "m1" || st["thinkingLevel"] != "high" || st["modelName"] != "Model One" {
		t.Fatalf("after restart, planner/model %v", st)
	}
	if m := ta.DialRoom(ch.ID).Until("chat:model")["model"].(map[string]any); m["model"] != "m1" || m["modelName"] != "Model One" {
		t.Fatalf("after restart, chat:model %v", m)
	}
	ts = newTurns()
	link = ta.attachWith(ch.ID, []string{"capability-catalog"}, ts.handler())
	if err := link.ReportCapabilities(catalog); err != nil {
		t.Fatal(err)
	}
	modelUntil(ta.DialRoom(ch.ID), func(m map[string]any) bool { return m["offered"] == true })
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	turn := ts.next(t)
	if turn.Message.Model != "m1" || turn.Message.ThinkingLevel != "high" {
		t.Fatalf("turn after restart: model %q level %q", turn.Message.Model, turn.Message.ThinkingLevel)
	}
	turn.done <- nil
	waitIdle(t, ta, ch.ID)

	// {} returns to the client's default, and that is saved too.
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/planner/model", map[string]string{}), 200, "")
	ta.Stop()
	ta = startAppWith(t, ta.app.Config())
	st = nil
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner/model", nil).JSON(t, &st)
	if _, ok := st["model"]; ok {
		t.Fatalf("after clearing and a restart, planner/model %v", st)
	}
}

// Which reply answers which message is saved: a reply that failed before a
// restart is retried after it, and the recorded reply is the one removed.
func TestRetryAfterRestart(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	ts := newTurns()
	ta.attachWith(ch.ID, []string{"retry-turn"}, ts.handler())
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"})
	apptest.Want(t, r, 201, "")
	var sent map[string]any
	r.JSON(t, &sent)
	msgID := sent["id"].(string)
	first := ts.next(t)
	first.done <- errors.New("The model's provider is down.")
	waitIdle(t, ta, ch.ID)
	failedID := ""
	var list struct {
		Messages []map[string]any `json:"messages"`
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	for _, m := range list.Messages {
		if m["role"] == "planner" && m["status"] == "failed" {
			failedID = m["id"].(string)
		}
	}
	if got, err := ta.app.Store().ReplyTo(t.Context(), ch.ID, msgID); err != nil || got != failedID {
		t.Fatalf("recorded reply %q, %v; want %q", got, err, failedID)
	}
	ta.Stop()

	ta = startAppWith(t, ta.app.Config())
	ts = newTurns()
	ta.attachWith(ch.ID, []string{"retry-turn"}, ts.handler())
	r = ta.Do("POST", "/api/channels/"+ch.ID+"/messages/"+msgID+"/retry", nil)
	apptest.Want(t, r, 200, "")
	var retried map[string]any
	r.JSON(t, &retried)
	if retried["removed"] != failedID {
		t.Fatalf("retry removed %v, want %s", retried["removed"], failedID)
	}
	again := ts.next(t)
	if again.Message.ChatMessage != msgID || !again.Message.Retry {
		t.Fatalf("retry turn %+v", again.Message)
	}
	again.done <- nil
	waitIdle(t, ta, ch.ID)
	if got, _ := ta.app.Store().ReplyTo(t.Context(), ch.ID, msgID); got == failedID || got == "" {
		t.Fatalf("after the retry the recorded reply is %q", got)
	}
}
