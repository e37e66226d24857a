package app

// Reopen and Discard, through the real app: a Planner attached over the
// agent connection asks a questionnaire; a member answers one question and
// discards the other, and the Planner's waiting request gets the cancelled
// result the specification gives a cancelled question (the answered one
// kept). The answered card is reopened (its answer kept as its previous
// one), the Planner's next turn is told of both and finds the reopened card
// with open_decisions; it is answered again, then discarded. The record in
// the exported Markdown says all of it, and imports again. An archived
// document refuses every change to its decisions, in the words it refuses
// comments with.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// decisionByID is the document's card id.
func (ta *testApp) decisionByID(t *testing.T, channelID, id string) room.Decision {
	t.Helper()
	var ds struct{ Decisions []room.Decision }
	ta.Do("GET", "/api/channels/"+channelID+"/decisions", nil).JSON(t, &ds)
	for _, d := range ds.Decisions {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("no card %s", id)
	return room.Decision{}
}

// untilDecision waits on a tab's socket for question's card in status.
func untilDecision(c *apptest.Room, id, status string) map[string]any {
	for {
		d := c.Until("decision:update")["decision"].(map[string]any)
		if d["id"] == id && d["status"] == status {
			return d
		}
	}
}

func TestDecisionReopenAndDiscard(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Reopen")
	ta.putPlan(t, doc.ID, 0, "# Reopen\n\nWhich store do we use?\n")
	browser := ta.DialRoom(doc.ID)

	asked := make(chan client.Result, 1)
	prompts := make(chan string, 4)
	listed := make(chan json.RawMessage, 4)
	turn := func(ctx context.Context, tn *client.Turn) error {
		if tn.Session.Mode == wire.ModeIsolated {
			return tn.Text(descriptionJSON("Plan for a test"))
		}
		if strings.Contains(tn.Prompt(), "@chopin ask") {
			opts := []wire.Option{{Label: "SQLite", Description: "one file"}, {Label: "Postgres", Description: "a server"}}
			res, err := tn.Session.Ask(ctx, wire.Input{Method: wire.MethodQuestionnaire, Params: &wire.QuestionnaireParams{
				Questions: []wire.QuestionItem{
					{Question: "Which store?", Header: "Store", Options: opts},
					{Question: "Which cache?", Header: "Cache", Options: opts},
				}}}, client.AskOptions{})
			if err != nil {
				t.Errorf("ask: %v", err)
				return err
			}
			asked <- res
			return tn.Text("Asked.")
		}
		prompts <- tn.Prompt()
		out, err := tn.CallTool(ctx, "open_decisions", map[string]any{})
		if err != nil {
			return err
		}
		listed <- out
		return tn.Text("Noted.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: doc.ID, Handler: client.Handler{Turn: turn}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ta.waitAttached(browser, doc.ID)
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin ask"})

	storeID := ta.openCard(t, doc.ID, "Which store?") // the call's first card; the second follows it
	var cards struct{ Decisions []room.Decision }
	ta.Do("GET", "/api/channels/"+doc.ID+"/decisions", nil).JSON(t, &cards)
	if len(cards.Decisions) != 2 || cards.Decisions[0].ID != storeID || cards.Decisions[1].Index != 1 {
		t.Fatalf("cards %+v", cards.Decisions)
	}
	cacheID := cards.Decisions[1].ID
	browser.Send(map[string]any{"type": "decision:answer", "id": "a1", "decision": storeID, "answer": map[string]any{"labels": []string{"SQLite"}}})
	untilDecision(browser, storeID, "decided")

	// Discarding the card the Planner still waits on answers its request
	// as a cancelled one, keeping the question already answered.
	browser.Send(map[string]any{"type": "decision:discard", "id": "x1", "decision": cacheID})
	d := untilDecision(browser, cacheID, "discarded")
	if d["discardedBy"] == "" || d["discardedBy"] == nil {
		t.Errorf("a discarded card names nobody: %v", d)
	}
	select {
	case res := <-asked:
		if res.Status != "cancelled" || len(res.Answers) != 1 || res.Answers[0].Question != "Which store?" {
			t.Errorf("the Planner's request got %+v, want cancelled with the store's answer", res)
		}
		raw, _ := json.Marshal(res.Answers[0])
		if !strings.Contains(string(raw), `"answer":"SQLite"`) {
			t.Errorf("the kept answer %s", raw)
		}
	case <-time.After(apptest.Wait):
		t.Fatal("the Planner's request was never answered")
	}
	// Discarded is final.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+cacheID+"/discard", nil), 409, "decision-closed")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+cacheID+"/reopen", nil), 409, "decision-closed")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+cacheID+"/answer", map[string]any{"labels": []string{"SQLite"}}), 409, "decision-closed")

	// Reopen: the answer becomes the previous one, and the card waits again.
	browser.Send(map[string]any{"type": "decision:reopen", "id": "r1", "decision": storeID})
	d = untilDecision(browser, storeID, "reopened")
	if d["answer"] != nil || !strings.Contains(toJSON(d["previous"]), `"labels":["SQLite"]`) {
		t.Errorf("a reopened card %v", d)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+storeID+"/reopen", nil), 409, "decision-open")

	// The Planner's next turn is told of both, and open_decisions lists the
	// reopened card with its previous answer and the discarded one.
	// The first turn ends once its reply is done; a message that came
	// while it was ending would go to it, not start a turn, so the message
	// is sent again until a turn starts.
	eventually(t, "the first turn's reply done", func() bool {
		var list struct{ Messages []room.Message }
		ta.Do("GET", "/api/channels/"+doc.ID+"/messages", nil).JSON(t, &list)
		for _, m := range list.Messages {
			if m.Role == room.RolePlanner && m.Text == "Asked." && m.Status == room.ReplyDone {
				return true
			}
		}
		return false
	})
	var p string
	for try := 0; p == ""; try++ {
		browser.Send(map[string]any{"type": "chat:send", "id": fmt.Sprintf("m2-%d", try), "text": "@chopin what changed?"})
		select {
		case p = <-prompts:
		case <-time.After(2 * time.Second):
			if try == 5 {
				t.Fatal("no second turn")
			}
		}
	}
	for _, want := range []string{"reopened the decision “Which store?” (it was: SQLite); it waits for a new answer in Decisions."} {
		if !strings.Contains(p, want) {
			t.Errorf("the turn's prompt does not say %q:\n%s", want, p)
		}
	}
	var open struct {
		Decisions []room.Decision `json:"decisions"`
		Discarded []room.Decision `json:"discarded"`
	}
	select {
	case raw := <-listed:
		if err := json.Unmarshal(raw, &open); err != nil {
			t.Fatalf("open_decisions %s: %v", raw, err)
		}
	case <-time.After(apptest.Wait):
		t.Fatal("open_decisions never answered")
	}
	if len(open.Decisions) != 1 || open.Decisions[0].ID != storeID || open.Decisions[0].Status != "reopened" ||
		len(open.Decisions[0].Previous) != 1 || open.Decisions[0].Previous[0].Answer.Labels[0] != "SQLite" {
		t.Errorf("open_decisions listed %+v", open.Decisions)
	}
	if len(open.Discarded) != 1 || open.Discarded[0].ID != cacheID {
		t.Errorf("open_decisions' discarded %+v", open.Discarded)
	}

	// Answered again: decided, the earlier answer still under it.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+storeID+"/answer", map[string]any{"labels": []string{"Postgres"}}), 200, "")
	store := ta.decisionByID(t, doc.ID, storeID)
	if store.Status != "decided" || store.Answer.Labels[0] != "Postgres" || len(store.Previous) != 1 || store.Previous[0].ReopenedBy == "" {
		t.Errorf("answered again %+v", store)
	}
	inline := ta.planFile(t, doc.ID, "inline")
	for _, want := range []string{"> **Answer:** Postgres (@", "> **Previous:** SQLite (@", "> **Decision:** Which cache?\n>\n> _Discarded by @"} {
		if !strings.Contains(inline, want) {
			t.Errorf("the exported record does not hold %q:\n%s", want, inline)
		}
	}
	// Either file imports as the same plan.
	for _, file := range []string{ta.planFile(t, doc.ID, "keep"), inline} {
		copied, r := ta.importFile(t, "octo/plans", "reopen.md", []byte(file))
		apptest.Want(t, r, 201, "")
		if got := ta.planFile(t, copied.ID, "keep"); got != inline {
			t.Errorf("imported again\n%q\nwant\n%q", got, inline)
		}
	}

	// A decided card can be discarded: its answer stays, set aside.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+storeID+"/discard", nil), 200, "")
	store = ta.decisionByID(t, doc.ID, storeID)
	if store.Status != "discarded" || store.Answer == nil || store.Answer.Labels[0] != "Postgres" || store.DiscardedBy == "" {
		t.Errorf("a discarded decided card %+v", store)
	}

	// A permission the Planner acted on cannot be reopened.
	ch, _ := ta.app.store.Channel(context.Background(), doc.ID)
	perm, _ := room.ParseQuestionCall([]byte(`{"method": "questionnaire", "params": {"questions": [{"question": "Run ls?", "header": "Permission", "options": [{"label": "Allow", "description": ""}, {"label": "Deny", "description": ""}]}]}}`))
	ta.app.hub.Do(context.Background(), ta.app.roomChannel(ch), func(r *room.Room) error {
		_, err := r.AskApart(context.Background(), perm, nil)
		return err
	})
	permID := ta.openCard(t, doc.ID, "Run ls?")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+permID+"/answer", map[string]any{"labels": []string{"Allow"}}), 200, "")
	r := ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+permID+"/reopen", nil)
	apptest.Want(t, r, 409, "decision-closed")
	if !strings.Contains(string(r.Body), "cannot be reopened") {
		t.Errorf("the refusal %s", r.Body)
	}

	// Archived: every change is refused as a comment's is.
	ask, _ := room.ParseQuestionCall([]byte(`{"method": "confirm", "title": "Ship?", "message": "Friday."}`))
	ta.app.hub.Do(context.Background(), ta.app.roomChannel(ch), func(r *room.Room) error {
		_, err := r.Ask(context.Background(), ask, nil, nil)
		return err
	})
	shipID := ta.openCard(t, doc.ID, "Ship?")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/archive", nil), 200, "")
	comment := ta.Do("POST", "/api/channels/"+doc.ID+"/comments/c-none/dismiss", nil)
	apptest.Want(t, comment, 409, "document-archived")
	for _, c := range []struct{ id, what string }{{permID, "discard"}, {shipID, "discard"}, {shipID, "cancel"}, {permID, "reopen"}} {
		r := ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+c.id+"/"+c.what, nil)
		apptest.Want(t, r, 409, "document-archived")
		if string(r.Body) != string(comment.Body) {
			t.Errorf("%s on an archived document said %s; a comment's refusal says %s", c.what, r.Body, comment.Body)
		}
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+shipID+"/answer", map[string]any{"yes": true}), 409, "document-archived")

	// Everything survives a restart.
	ta.Stop()
	ta2 := startAppWith(t, ta.app.cfg)
	store = ta2.decisionByID(t, doc.ID, storeID)
	if store.Status != "discarded" || len(store.Previous) != 1 || store.Previous[0].Answer.Labels[0] != "SQLite" || store.DiscardedBy == "" {
		t.Errorf("after a restart %+v", store)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The shared live draft: what one tab composes on a waiting card reaches
// every other tab, with who and where, and is never stored; any tab
// submits the answer. A card that no longer waits, a draft too large, an
// unknown field and an archived document are refused.
func TestDecisionDraftRelayed(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Drafts")
	first, second := ta.DialRoom(doc.ID), ta.DialRoom(doc.ID)
	ch, _ := ta.app.store.Channel(context.Background(), doc.ID)
	call, _ := room.ParseQuestionCall([]byte(`{"method": "questionnaire", "params": {"questions": [{"question": "Which store?", "header": "Store", "options": [{"label": "SQLite", "description": ""}, {"label": "Postgres", "description": ""}]}]}}`))
	ta.app.hub.Do(context.Background(), ta.app.roomChannel(ch), func(r *room.Room) error {
		_, err := r.Ask(context.Background(), call, nil, nil)
		return err
	})
	id := ta.openCard(t, doc.ID, "Which store?")

	first.Send(map[string]any{"type": "decision:draft", "decision": id, "field": "options", "draft": map[string]any{"labels": []string{"Postgres"}}})
	got := second.Until("decision:draft")
	if got["decision"] != id || got["field"] != "options" || got["login"] != "ada" || got["tab"] == "" ||
		toJSON(got["draft"]) != `{"labels":["Postgres"]}` {
		t.Errorf("the other tab got %v", got)
	}
	first.Send(map[string]any{"type": "decision:draft", "decision": id, "field": "text", "draft": map[string]any{"writing": true, "text": "Post"}})
	if got := second.Until("decision:draft"); got["field"] != "text" || toJSON(got["draft"]) != `{"text":"Post","writing":true}` {
		t.Errorf("the other tab got %v", got)
	}
	// Refusals, each answered to the sender.
	for _, c := range []struct {
		frame map[string]any
		code  string
	}{
		{map[string]any{"type": "decision:draft", "id": "f1", "decision": id, "field": "elsewhere"}, "malformed-message"},
		{map[string]any{"type": "decision:draft", "id": "f2", "decision": id, "field": "text", "draft": map[string]any{"text": strings.Repeat("x", 70000)}}, "draft-too-large"},
		{map[string]any{"type": "decision:draft", "id": "f3", "decision": "d-none", "field": "text"}, "not-found"},
	} {
		first.Send(c.frame)
		if e := first.Until("error"); e["code"] != c.code || e["id"] != c.frame["id"] {
			t.Errorf("%v: %v, want %s", c.frame, e, c.code)
		}
	}
	// Nothing was stored; the second tab submits, and it is decided.
	if d := ta.decisionByID(t, doc.ID, id); d.Status != "open" || d.Answer != nil {
		t.Errorf("a draft changed the card: %+v", d)
	}
	second.Send(map[string]any{"type": "decision:answer", "id": "a1", "decision": id, "answer": map[string]any{"labels": []string{"Postgres"}}})
	untilDecision(first, id, "decided")
	if d := ta.decisionByID(t, doc.ID, id); d.AnsweredBy != "ada" || d.Answer.Labels[0] != "Postgres" {
		t.Errorf("submitted %+v", d)
	}
	first.Send(map[string]any{"type": "decision:draft", "id": "f4", "decision": id, "field": "options"})
	if e := first.Until("error"); e["code"] != "decision-closed" {
		t.Errorf("a draft of a decided card: %v", e)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/decisions/"+id+"/reopen", nil), 200, "")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/archive", nil), 200, "")
	third := ta.DialRoom(doc.ID)
	third.Send(map[string]any{"type": "decision:draft", "id": "f5", "decision": id, "field": "options"})
	if e := third.Until("error"); e["code"] != "read-only" && e["code"] != "document-archived" {
		t.Errorf("a draft on an archived document: %v", e)
	}
}
