package plannerhost_test

import (
	"errors"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// Retry through the real app (retry-turn): the failed attempt leaves Chat for
// everyone, and the same message runs again, named and marked retry.
func TestAgentRetryEndToEnd(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	ts := newTurns()
	link := ta.attachWith(ch.ID, []string{"retry-turn"}, ts.handler())
	if !link.Has("retry-turn") {
		t.Fatalf("features %v", link.Attached().Features)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "Morning"}), 201, "")
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"})
	apptest.Want(t, r, 201, "")
	var sent map[string]any
	r.JSON(t, &sent)
	msgID := sent["id"].(string)

	first := ts.next(t)
	if first.Message.ChatMessage != msgID || first.Message.Retry {
		t.Fatalf("first turn message %q retry %v", first.Message.ChatMessage, first.Message.Retry)
	}
	if err := first.Text("Half a repl"); err != nil {
		t.Fatal(err)
	}
	first.call(t, "read_plan", map[string]any{})
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages/"+msgID+"/retry", nil), 409, "not-retriable") // its reply is still streaming
	first.done <- errors.New("The model's provider is down.")
	var failed map[string]any
	for failed == nil || failed["role"] != "planner" || failed["status"] != "failed" {
		failed = browser.Until("chat:message")["message"].(map[string]any)
	}
	waitIdle(t, ta, ch.ID)

	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages/nope/retry", nil), 404, "message-not-found")
	r = ta.Do("POST", "/api/channels/"+ch.ID+"/messages/"+msgID+"/retry", nil)
	apptest.Want(t, r, 200, "")
	if removed := browser.Until("chat:removed"); removed["message"] != failed["id"] {
		t.Fatalf("chat:removed %v, want %v", removed, failed["id"])
	}
	again := ts.next(t)
	if again.Message.ChatMessage != msgID || !again.Message.Retry || again.Message.Prompt != first.Message.Prompt ||
		again.Message.Instructions != first.Message.Instructions || again.Session.ID == first.Session.ID {
		t.Fatalf("retry turn %+v\nfirst %+v", again.Message, first.Message)
	}
	if err := again.Text("A whole reply."); err != nil {
		t.Fatal(err)
	}
	again.done <- nil
	for done := map[string]any{}; done["role"] != "planner" || done["status"] != "done"; {
		done = browser.Until("chat:message")["message"].(map[string]any)
	}

	var list struct {
		Messages []map[string]any `json:"messages"`
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	var got []string
	for _, m := range list.Messages {
		got = append(got, m["role"].(string)+":"+m["text"].(string)+":"+str(m["status"]))
	}
	wantList := []string{"person:Morning:", "person:@chopin go:", "planner:A whole reply.:done"}
	if len(got) != len(wantList) || got[0] != wantList[0] || got[1] != wantList[1] || got[2] != wantList[2] {
		t.Fatalf("transcript %q, want %q", got, wantList)
	}
	// Only a failed reply can be retried.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages/"+msgID+"/retry", nil), 409, "not-retriable")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages/"+list.Messages[0]["id"].(string)+"/retry", nil), 409, "not-retriable")
}

func str(v any) string { s, _ := v.(string); return s }
