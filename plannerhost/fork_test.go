package plannerhost_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
)

// Session forks through the real app (session-forks): Chat is one thread, so
// a second @chopin turn forks from the first's session and turn, with the
// system prompt alone; a failed turn records no fork point, so its Retry
// forks from the turn before it.
func TestAgentForkEndToEnd(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	ts := newTurns()
	var mu sync.Mutex
	forks := map[string]wire.ForkFrom{}
	h := ts.handler()
	h.Fork = func(s *client.Session, from wire.ForkFrom) error {
		mu.Lock()
		defer mu.Unlock()
		forks[s.ID] = from
		return nil
	}
	link := ta.attachWith(ch.ID, []string{"session-forks", "retry-turn"}, h)
	if !link.Has("session-forks") {
		t.Fatalf("features %v", link.Attached().Features)
	}
	forkOf := func(session string) (wire.ForkFrom, bool) {
		mu.Lock()
		defer mu.Unlock()
		f, ok := forks[session]
		return f, ok
	}
	finish := func(tt *testTurn, text string, err error) {
		t.Helper()
		if e := tt.Text(text); e != nil {
			t.Fatal(e)
		}
		tt.done <- err
		status := "done"
		if err != nil {
			status = "failed"
		}
		for m := map[string]any{}; m["role"] != "planner" || m["status"] != status; {
			m = browser.Until("chat:message")["message"].(map[string]any)
		}
		waitIdle(t, ta, ch.ID)
	}
	send := func(text string) string {
		t.Helper()
		r := ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": text})
		apptest.Want(t, r, 201, "")
		var sent map[string]any
		r.JSON(t, &sent)
		return sent["id"].(string)
	}

	send("@chopin draft the plan")
	first := ts.next(t)
	if _, ok := forkOf(first.Session.ID); ok {
		t.Fatal("the first turn forked from nothing")
	}
	finish(first, "Drafted.", nil)

	send("@chopin now the risks")
	second := ts.next(t)
	from, ok := forkOf(second.Session.ID)
	if !ok || from != (wire.ForkFrom{Session: first.Session.ID, Turn: first.ID()}) {
		t.Fatalf("second turn's fork %+v (%v), want from %s/%s", from, ok, first.Session.ID, first.ID())
	}
	if strings.Contains(second.Message.Instructions, "The conversation so far") || !strings.Contains(second.Message.Instructions, "This document: Launch") {
		t.Fatalf("a forked turn's instructions:\n%s", second.Message.Instructions)
	}
	if second.Message.Prompt != "@"+ta.app.Config().Login+": @chopin now the risks" {
		t.Fatalf("forked turn's prompt %q", second.Message.Prompt)
	}
	finish(second, "Listed.", nil)

	failing := send("@chopin and the timeline")
	third := ts.next(t)
	finish(third, "Half", errors.New("The model's provider is down."))
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages/"+failing+"/retry", nil), 200, "")
	again := ts.next(t)
	from, ok = forkOf(again.Session.ID)
	if !ok || from != (wire.ForkFrom{Session: second.Session.ID, Turn: second.ID()}) || !again.Message.Retry {
		t.Fatalf("retry's fork %+v (%v), want from %s/%s; retry %v", from, ok, second.Session.ID, second.ID(), again.Message.Retry)
	}
	finish(again, "Timeline done.", nil)

	// A failed turn that is not retried: the next turn forks from the last
	// finished one, so its prompt must carry the message the failed turn lost.
	send("@chopin and the budget")
	fourth := ts.next(t)
	finish(fourth, "Partial", errors.New("The model's provider is down again."))
	send("@chopin cost it anyway")
	fifth := ts.next(t)
	if from, _ := forkOf(fifth.Session.ID); from != (wire.ForkFrom{Session: again.Session.ID, Turn: again.ID()}) {
		t.Fatalf("fifth turn's fork %+v, want from the retried turn", from)
	}
	if !strings.Contains(fifth.Message.Prompt, "@"+ta.app.Config().Login+": @chopin and the budget") {
		t.Fatalf("the prompt after a failed turn lost its message:\n%s", fifth.Message.Prompt)
	}
	finish(fifth, "Costed.", nil)
}
