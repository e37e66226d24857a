package plannerhost_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/app/apptest"
)

// The capability-catalog and steer-turn features through the real app: the
// client's report reaches the composers as chat:model, a person's choice
// reaches the turn, and a message sent while the Planner works is steered.

// attachWith attaches a Planner that asks for features.
func (ta *testApp) attachWith(document string, features []string, h client.Handler) *client.Link {
	ta.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: document, Features: features, Handler: describing(h)})
	if err != nil {
		ta.T.Fatalf("attach %s: %v", document, err)
	}
	ta.T.Cleanup(func() { l.Close() })
	return l
}

// modelUntil reads chat:model messages until one satisfies ok.
func modelUntil(rc *apptest.Room, ok func(map[string]any) bool) map[string]any {
	rc.T.Helper()
	for {
		m := rc.Until("chat:model")["model"].(map[string]any)
		if ok(m) {
			return m
		}
	}
}

// waitNotice waits for a system line in the document's Chat.
func (ta *testApp) waitNotice(channelID, text string) {
	ta.T.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for {
		var list struct {
			Messages []map[string]any `json:"messages"`
		}
		ta.Do("GET", "/api/channels/"+channelID+"/messages", nil).JSON(ta.T, &list)
		for _, m := range list.Messages {
			if m["role"] == "system" && m["text"] == text {
				return
			}
		}
		if time.Now().After(deadline) {
			ta.T.Fatalf("no notice %q in %v", text, list.Messages)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (ta *testApp) countNotices(channelID, prefix string) int {
	var list struct {
		Messages []map[string]any `json:"messages"`
	}
	ta.Do("GET", "/api/channels/"+channelID+"/messages", nil).JSON(ta.T, &list)
	n := 0
	for _, m := range list.Messages {
		if s, _ := m["text"].(string); m["role"] == "system" && strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

func TestAgentCatalogEndToEnd(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	// A joining socket gets chat:model; without a catalog nothing is offered.
	if m := browser.Until("chat:model")["model"].(map[string]any); m["offered"] != false {
		t.Fatalf("chat:model before any Planner: %v", m)
	}
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/planner/model", map[string]string{"model": "m1"}), 409, "no-catalog")

	ts := newTurns()
	link := ta.attachWith(ch.ID, []string{"capability-catalog"}, ts.handler())
	if !link.Has("capability-catalog") {
		t.Fatalf("features %v", link.Attached().Features)
	}
	catalog := `{"models":{"available":[
		{"id":"m1","name":"Model One","provider":{"id":"acme","name":"Acme"},"thinkingLevels":["low","xhigh","","低"],"inputTypes":["text","image"],"extra":{"kept":true}},
		{"id":"","name":"nobody"},
		{"id":"m2","name":"Model Two"}],
		"default":{"id":"m2"}},
		"commands":[{"name":"review","kind":"skill"},{"name":"ship","description":"Ship it","kind":"workflow"}]}`
	if err := link.ReportCapabilities(json.RawMessage(catalog)); err != nil {
		t.Fatal(err)
	}
	m := modelUntil(browser, func(m map[string]any) bool { return m["offered"] == true })
	models := m["models"].([]any)
	if len(models) != 2 || models[0].(map[string]any)["id"] != "m1" ||
		strings.Join(toStrings(models[0].(map[string]any)["thinkingLevels"]), ",") != "low,xhigh,低" ||
		m["default"].(map[string]any)["id"] != "m2" || len(m["commands"].([]any)) != 2 {
		t.Fatalf("chat:model %v", m)
	}
	// A fresh socket gets the same state on joining.
	if m := ta.DialRoom(ch.ID).Until("chat:model")["model"].(map[string]any); m["offered"] != true || len(m["commands"].([]any)) != 2 {
		t.Fatalf("chat:model on join %v", m)
	}

	put := func(body any) apptest.Response {
		return ta.Do("PUT", "/api/channels/"+ch.ID+"/planner/model", body)
	}
	apptest.Want(t, put(map[string]string{"model": "m9"}), 409, "model-unavailable")
	apptest.Want(t, put(map[string]string{"model": ""}), 400, "invalid-argument")
	apptest.Want(t, put(map[string]string{"model": "m1", "thinkingLevel": "max"}), 409, "thinking-level-unavailable")
	apptest.Want(t, put(map[string]string{"thinkingLevel": "low"}), 409, "thinking-level-unavailable") // m2, the default, has no levels
	r := put(map[string]string{"model": "m1", "thinkingLevel": "低"})
	apptest.Want(t, r, 200, "")
	var st map[string]any
	r.JSON(t, &st)
	if st["model"] != "m1" || st["thinkingLevel"] != "低" || st["modelName"] != "Model One" {
		t.Fatalf("PUT answered %v", st)
	}
	modelUntil(browser, func(m map[string]any) bool { return m["model"] == "m1" })

	// The choice reaches the turn exactly as the client spelled it.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	turn := ts.next(t)
	if turn.Message.Model != "m1" || turn.Message.ThinkingLevel != "低" {
		t.Fatalf("turn model %q level %q", turn.Message.Model, turn.Message.ThinkingLevel)
	}
	turn.done <- nil
	waitIdle(t, ta, ch.ID)

	// The client stops listing m1: the composer says so, and the next turn
	// runs with the client's default, recorded in Chat once.
	if err := link.ReportCapabilities(json.RawMessage(`{"models":{"available":[{"id":"m2","name":"Model Two"}],"default":{"id":"m2"}}}`)); err != nil {
		t.Fatal(err)
	}
	if m := modelUntil(browser, func(m map[string]any) bool { return m["unavailable"] == true }); m["modelName"] != "Model One" {
		t.Fatalf("chat:model %v", m)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin again"}), 201, "")
	turn = ts.next(t)
	if turn.Message.Model != "" || turn.Message.ThinkingLevel != "" {
		t.Fatalf("fallback turn model %q level %q", turn.Message.Model, turn.Message.ThinkingLevel)
	}
	const notice = "The model Model One chosen for this document is no longer available, so the Planner replied with its default model."
	ta.waitNotice(ch.ID, notice)
	modelUntil(browser, func(m map[string]any) bool { return m["unavailable"] == nil && m["model"] == "m1" })
	turn.done <- nil
	waitIdle(t, ta, ch.ID)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin once more"}), 201, "")
	turn = ts.next(t)
	turn.done <- nil
	waitIdle(t, ta, ch.ID)
	if n := ta.countNotices(ch.ID, "The model Model One"); n != 1 {
		t.Fatalf("the fallback was recorded %d times", n)
	}

	// The catalog is the attached client's alone: it goes with the link.
	link.Close()
	modelUntil(browser, func(m map[string]any) bool { return m["offered"] == false && len(m["commands"].([]any)) == 0 })
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// waitIdle waits until the document's Planner takes a new message.
func waitIdle(t *testing.T, ta *testApp, channelID string) {
	t.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for ta.app.Agent().Busy(channelID) || ta.app.Agent().Refusal(context.Background(), channelID) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the Planner stayed busy")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAgentSteerEndToEnd(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	ts := newTurns()
	steered := make(chan string, 4)
	h := ts.handler()
	h.Steer = func(_ *client.Turn, prompt string) (bool, string) {
		steered <- prompt
		if strings.Contains(prompt, "refuse") {
			return false, "The turn is finishing."
		}
		return true, ""
	}
	ta.attachWith(ch.ID, []string{"steer-turn"}, h)

	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin first"}), 201, "")
	turn := ts.next(t)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin also this"}), 201, "")
	select {
	case p := <-steered:
		if p != "@ada: @chopin also this" {
			t.Fatalf("steer prompt %q", p)
		}
	case <-time.After(apptest.Wait):
		t.Fatal("no steer")
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin refuse this"}), 201, "")
	ta.waitNotice(ch.ID, "The Planner did not read @ada's message while it worked, and it will not be sent again: The turn is finishing. Send it again once the Planner has replied.")
	turn.done <- nil
	waitIdle(t, ta, ch.ID)
	select {
	case tt := <-ts.ch:
		t.Fatalf("a steered message started a turn of its own: %q", tt.Prompt())
	default:
	}
}

// Without steer-turn a message sent while the Planner works is refused in
// the spec's words, and nothing is steered.
func TestAgentBusyWithoutSteer(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	ts := newTurns()
	ta.attachWith(ch.ID, []string{"capability-catalog"}, ts.handler())
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin first"}), 201, "")
	turn := ts.next(t)
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin also"})
	apptest.Want(t, r, 409, "planner-busy")
	var e map[string]string
	r.JSON(t, &e)
	if e["message"] != "chopin can't take messages while it works on this machine. Stop it to ask now." {
		t.Fatalf("refusal %q", e["message"])
	}
	turn.done <- nil
}

// Commands the client reported run as the spec says: "/name args" for a
// skill, a request to start the workflow for a workflow; an unknown name or
// kind is refused.
func TestAgentCommandsEndToEnd(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	send := func(text string, cmd map[string]string) apptest.Response {
		return ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]any{"text": text, "command": cmd})
	}
	apptest.Want(t, send("x", map[string]string{"name": "review", "kind": "skill"}), 400, "unknown-command")

	ts := newTurns()
	link := ta.attachWith(ch.ID, []string{"capability-catalog"}, ts.handler())
	if err := link.ReportCapabilities(json.RawMessage(`{"commands":[{"name":"review","kind":"skill"},{"name":"ship it","description":"Ship","kind":"workflow"}]}`)); err != nil {
		t.Fatal(err)
	}
	modelUntil(browser, func(m map[string]any) bool { return len(m["commands"].([]any)) == 2 })

	apptest.Want(t, send("x", map[string]string{"name": "review", "kind": "workflow"}), 400, "unknown-command")
	apptest.Want(t, send("x", map[string]string{"name": "reviews", "kind": "skill"}), 400, "unknown-command")
	r := send(" the rollout ", map[string]string{"name": "review", "kind": "skill"})
	apptest.Want(t, r, 201, "")
	var m map[string]any
	r.JSON(t, &m)
	if m["text"] != "@chopin /review the rollout" {
		t.Fatalf("message text %q", m["text"])
	}
	turn := ts.next(t)
	if turn.Prompt() != "/review the rollout" {
		t.Fatalf("skill prompt %q", turn.Prompt())
	}
	turn.done <- nil
	waitIdle(t, ta, ch.ID)

	browser.Send(map[string]any{"type": "chat:send", "id": "c1", "text": "v2", "command": map[string]string{"name": "ship it", "kind": "workflow"}})
	turn = ts.next(t)
	if turn.Prompt() != `Start the workflow "ship it" with this input: v2` {
		t.Fatalf("workflow prompt %q", turn.Prompt())
	}
	browser.Until("ok")
	turn.done <- nil
	waitIdle(t, ta, ch.ID)

	// Typed by hand, a reported command runs the same way.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin /review"}), 201, "")
	if turn = ts.next(t); turn.Prompt() != "/review" {
		t.Fatalf("typed prompt %q", turn.Prompt())
	}
	turn.done <- nil
}
