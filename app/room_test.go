package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// insertAt is a CodeMirror ChangeSet JSON inserting text at pos of a
// document of length n (UTF-16 units).
func insertAt(pos, n int, text string) json.RawMessage {
	var parts []any
	if pos > 0 {
		parts = append(parts, pos)
	}
	parts = append(parts, append([]any{0}, toAny(strings.Split(text, "\n"))...))
	if n-pos > 0 {
		parts = append(parts, n-pos)
	}
	raw, _ := json.Marshal(parts)
	return raw
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func TestRoomSocketPlanSync(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Sync")
	a, b := ta.DialRoom(ch.ID), ta.DialRoom(ch.ID)

	hello := a.Hello
	if hello["login"] != "ada" || hello["canEdit"] != true || hello["canManage"] != true {
		t.Errorf("hello %v", hello)
	}
	a.Send(map[string]any{"type": "plan:open", "id": "o1", "epoch": "", "version": 0})
	snap := a.Until("plan:snapshot")
	if snap["source"] != "# Sync\n" || snap["version"] != 0.0 || snap["id"] != "o1" {
		t.Fatalf("snapshot %v", snap)
	}
	epoch := snap["epoch"].(string)

	a.Send(map[string]any{"type": "plan:push", "id": "p1", "version": 0,
		"updates": []any{map[string]any{"clientID": "A", "changes": insertAt(7, 7, "\nHello 👋")}}})
	upd := b.Until("plan:updates")
	if upd["version"] != 0.0 || upd["epoch"] != epoch {
		t.Errorf("b got %v", upd)
	}
	if ack := a.Until("plan:ack"); ack["id"] != "p1" || ack["version"] != 1.0 {
		t.Errorf("ack %v", ack)
	}

	// A push at a version that has moved on is refused with the current one.
	b.Send(map[string]any{"type": "plan:push", "id": "p2", "version": 0,
		"updates": []any{map[string]any{"clientID": "B", "changes": insertAt(0, 7, "x")}}})
	stale := b.Until("error")
	if stale["code"] != "stale-version" || stale["version"] != 1.0 || stale["id"] != "p2" {
		t.Errorf("stale %v", stale)
	}
	// Reopening at the old version gets the missed update, not a snapshot.
	b.Send(map[string]any{"type": "plan:open", "epoch": epoch, "version": 0})
	if missed := b.Until("plan:updates"); len(missed["updates"].([]any)) != 1 {
		t.Errorf("missed %v", missed)
	}
	// Another epoch gets a snapshot.
	b.Send(map[string]any{"type": "plan:open", "epoch": "other", "version": 1})
	if s := b.Until("plan:snapshot"); s["source"] != "# Sync\n\nHello 👋" {
		t.Errorf("snapshot after edit: %q", s["source"])
	}

	// A change that does not fit the document is refused whole.
	b.Send(map[string]any{"type": "plan:push", "id": "p3", "version": 1,
		"updates": []any{map[string]any{"clientID": "B", "changes": insertAt(0, 99, "x")}}})
	if e := b.Until("error"); e["code"] != "invalid-changes" {
		t.Errorf("wrong length: %v", e)
	}
	// Nobody may write the server's reserved components.
	b.Send(map[string]any{"type": "plan:push", "id": "p4", "version": 1,
		"updates": []any{map[string]any{"clientID": "B", "changes": insertAt(0, 16, `<Decision id="x" />`+"\n")}}})
	if e := b.Until("error"); e["code"] != "reserved-component" {
		t.Errorf("reserved: %v", e)
	}

	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Sync\n\nHello 👋" || plan.Revision != 1 || len(plan.Blocks) != 2 {
		t.Errorf("plan over HTTP: %+v", plan)
	}

	// An HTTP edit is an ordinary change every socket receives.
	r := ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 1, "source": "# Sync\r\n\r\nRewritten\r\n"})
	apptest.Want(t, r, 200, "")
	if u := a.Until("plan:updates"); u["updates"].([]any)[0].(map[string]any)["clientID"] != "server" {
		t.Errorf("server update %v", u)
	}
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 1, "source": "late"}), 409, "stale-revision")
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Sync\n\nRewritten\n" || plan.Revision != 2 {
		t.Errorf("after PUT: %+v", plan)
	}
}

func TestRoomSocketBadInput(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Bad input")
	c := ta.DialRoom(ch.ID)

	for _, tc := range []struct{ frame, code string }{
		{`not json`, "malformed-message"},
		{`{"type": 3}`, "malformed-message"},
		{`{"type": "plan:teleport", "id": "x"}`, "unknown-message-type"},
		{`{"type": "plan:open", "epoch": "", "version": 0, "extra": true}`, "malformed-message"},
		{`{"type": "plan:push", "version": 0, "updates": [{"clientID": "", "changes": [0]}]}`, "malformed-message"},
		{`{"type": "plan:push", "version": 0, "updates": [{"clientID": "A", "changes": "nope"}]}`, "invalid-changes"},
		{`{"type": "plan:push", "version": 90, "updates": []}`, "stale-version"},
		{`{"type": "chat:send", "text": "   "}`, "invalid-argument"},
		{`{"type": "decision:answer", "decision": "nope", "answer": {"text": "x"}}`, "not-found"},
	} {
		c.Conn.WriteMessage(websocket.TextMessage, []byte(tc.frame))
		if e := c.Until("error"); e["code"] != tc.code {
			t.Errorf("%s: got %v, want %s", tc.frame, e, tc.code)
		}
	}
	c.Send(map[string]any{"type": "chat:send", "text": strings.Repeat("x", room.MaxMessageText+1)})
	if e := c.Until("error"); e["code"] != "message-too-large" {
		t.Errorf("long message: %v", e)
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Revision != 0 {
		t.Errorf("bad input changed the plan: %+v", plan)
	}

	// An oversize frame closes the socket with 1009; a binary one with 1003.
	big := ta.DialRoom(ch.ID)
	big.Conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"chat:send","text":"`+strings.Repeat("x", room.MaxFrameBytes)+`"}`))
	if code, _ := big.CloseCode(); code != websocket.CloseMessageTooBig {
		t.Errorf("oversize frame: close %d", code)
	}
	bin := ta.DialRoom(ch.ID)
	bin.Conn.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3})
	if code, _ := bin.CloseCode(); code != websocket.CloseUnsupportedData {
		t.Errorf("binary frame: close %d", code)
	}
}

func TestRoomSocketRefusedBeforeUpgrade(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Guarded")
	wsURL := "ws" + strings.TrimPrefix(ta.app.URL(), "http") + "/ws?channel="
	cookie := ta.Browser.Jar.Cookies(apptest.MustURL(ta.app.URL()))[0]
	for _, tc := range []struct {
		name   string
		query  string
		header map[string]string
		status int
	}{
		{"no session", ch.ID, map[string]string{"Origin": ta.app.URL()}, 401},
		{"foreign origin", ch.ID, map[string]string{"Origin": "http://evil.example", "Cookie": cookie.String()}, 403},
		{"no origin", ch.ID, map[string]string{"Cookie": cookie.String()}, 403},
		{"unknown document", "0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f", map[string]string{"Origin": ta.app.URL(), "Cookie": cookie.String()}, 404},
		{"bad id", "x", map[string]string{"Origin": ta.app.URL(), "Cookie": cookie.String()}, 400},
	} {
		h := map[string][]string{}
		for k, v := range tc.header {
			h[k] = []string{v}
		}
		_, resp, err := websocket.DefaultDialer.Dial(wsURL+tc.query, h)
		if err == nil || resp == nil || resp.StatusCode != tc.status {
			t.Errorf("%s: %v, response %v, want %d", tc.name, err, resp, tc.status)
		}
	}
}

func TestRoomChat(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Chat")
	a, b := ta.DialRoom(ch.ID), ta.DialRoom(ch.ID)

	a.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "Morning, all"})
	got := b.Until("chat:message")["message"].(map[string]any)
	if got["text"] != "Morning, all" || got["author"] != "ada" || got["role"] != "person" {
		t.Errorf("b got %v", got)
	}
	a.Until("ok")

	// Without a Planner, an @chopin message is refused in the spec's words and not kept.
	wantText := "Connect a machine to get a reply. Connect an agent client to " + ta.app.URL() +
		"/documents/octo/plans/chat over the agent connection from a session in a checkout of octo/plans."
	a.Send(map[string]any{"type": "chat:send", "id": "m2", "text": "@Chopin, draft the rollout"})
	e := a.Until("error")
	if e["code"] != "planner-not-attached" || e["message"] != wantText {
		t.Errorf("refusal %v", e)
	}
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "hey @chopin"})
	apptest.Want(t, r, 409, "planner-not-attached")
	if r.Code(); !strings.Contains(string(r.Body), wantText) {
		t.Errorf("HTTP refusal %s", r.Body)
	}
	// Not a mention: an e-mail address, or a longer word.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "mail me@chopin.dev about @chopinesque"}), 201, "")

	var list struct{ Messages []room.Message }
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	if len(list.Messages) != 2 || list.Messages[0].Text != "Morning, all" || list.Messages[1].Seq != 2 {
		t.Errorf("transcript %+v", list.Messages)
	}

	// The transcript survives a restart.
	ta.Stop()
	ta2 := startAppWith(t, ta.app.cfg)
	ta2.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	if len(list.Messages) != 2 {
		t.Errorf("after restart: %+v", list.Messages)
	}
}

func TestRoomDecisions(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Decide")
	c := ta.DialRoom(ch.ID)

	call, err := room.ParseQuestionCall([]byte(`{"method": "questionnaire", "params": {"questions": [
		{"question": "Which store?\nWe need durability.", "header": "Store", "options": [{"label": "SQLite", "description": "one file"}, {"label": "Postgres", "description": "a server"}]},
		{"question": "Which regions?", "header": "Regions", "multiSelect": true, "options": [{"label": "EU", "description": ""}, {"label": "US", "description": ""}]}
	]}}`))
	if err != nil {
		t.Fatal(err)
	}
	outcomes := make(chan room.Outcome, 1)
	store, _ := ta.app.store.Channel(context.Background(), ch.ID)
	var request string
	err = ta.app.hub.Do(context.Background(), ta.app.roomChannel(store), func(r *room.Room) error {
		var err error
		request, err = r.Ask(context.Background(), call, nil, func(o room.Outcome) { outcomes <- o })
		return err
	})
	if err != nil || request == "" {
		t.Fatal(err)
	}
	var list struct{ Decisions []room.Decision }
	ta.Do("GET", "/api/channels/"+ch.ID+"/decisions", nil).JSON(t, &list)
	if len(list.Decisions) != 2 || list.Decisions[0].Status != "open" {
		t.Fatalf("decisions %+v", list.Decisions)
	}
	first, second := list.Decisions[0].ID, list.Decisions[1].ID
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if !strings.Contains(plan.Source, `<Decision id="`+first+`" />`) || !strings.Contains(plan.Source, `<Decision id="`+second+`" />`) {
		t.Errorf("plan lacks the cards: %q", plan.Source)
	}

	// Wrong shapes are refused and change nothing.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+first+"/answer", map[string]any{"labels": []string{"SQLite", "Postgres"}}), 400, "invalid-answer")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+first+"/answer", map[string]any{"yes": true}), 400, "invalid-answer")

	c.Send(map[string]any{"type": "decision:answer", "id": "a1", "decision": first, "answer": map[string]any{"labels": []string{"SQLite"}}})
	for {
		d := c.Until("decision:update")["decision"].(map[string]any)
		if d["id"] == first && d["status"] == "decided" {
			break
		}
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+second+"/answer", map[string]any{"labels": []string{"EU", "US"}}), 200, "")

	select {
	case o := <-outcomes:
		raw, _ := json.Marshal(o)
		wantJSON := `{"status":"answered","value":{"answers":[` +
			`{"questionIndex":0,"question":"Which store?\nWe need durability.","kind":"option","answer":"SQLite"},` +
			`{"questionIndex":1,"question":"Which regions?","kind":"multi","answer":null,"selected":["EU","US"]}],"cancelled":false}}`
		if string(raw) != wantJSON {
			t.Errorf("outcome\n got %s\nwant %s", raw, wantJSON)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call never settled")
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+first+"/answer", map[string]any{"labels": []string{"Postgres"}}), 409, "decision-closed")

	// A withdrawn card takes no answers.
	confirm, _ := room.ParseQuestionCall([]byte(`{"method": "confirm", "title": "Ship?", "message": "Ready to ship."}`))
	ta.app.hub.Do(context.Background(), ta.app.roomChannel(store), func(r *room.Room) error {
		req, err := r.Ask(context.Background(), confirm, nil, nil)
		if err != nil {
			return err
		}
		return r.Withdraw(context.Background(), req)
	})
	ta.Do("GET", "/api/channels/"+ch.ID+"/decisions", nil).JSON(t, &list)
	last := list.Decisions[len(list.Decisions)-1]
	if last.Status != "expired" {
		t.Fatalf("withdrawn card %+v", last)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+last.ID+"/answer", map[string]any{"yes": true}), 409, "decision-closed")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+last.ID+"/cancel", nil), 409, "decision-closed")

	// Statuses survive a restart.
	ta.Stop()
	ta2 := startAppWith(t, ta.app.cfg)
	ta2.Do("GET", "/api/channels/"+ch.ID+"/decisions", nil).JSON(t, &list)
	if len(list.Decisions) != 3 || list.Decisions[0].Status != "decided" || list.Decisions[0].Answer.Labels[0] != "SQLite" || list.Decisions[2].Status != "expired" {
		t.Errorf("after restart %+v", list.Decisions)
	}
}

func TestRoomArchiveAndDeleteLive(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Live")
	c := ta.DialRoom(ch.ID)
	c.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
	c.Until("plan:snapshot")

	ta.Do("PATCH", "/api/channels/"+ch.ID, map[string]string{"title": "Live plan"})
	if m := c.Until("session:channel"); m["channel"].(map[string]any)["title"] != "Live plan" || m["canEdit"] != true {
		t.Errorf("rename broadcast %v", m)
	}
	ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil)
	if m := c.Until("session:channel"); m["canEdit"] != false || m["channel"].(map[string]any)["archivedAt"] == nil {
		t.Errorf("archive broadcast %v", m)
	}
	for _, frame := range []map[string]any{
		{"type": "plan:push", "version": 0, "updates": []any{map[string]any{"clientID": "A", "changes": insertAt(0, 7, "x")}}},
		{"type": "chat:send", "text": "hello"},
	} {
		c.Send(frame)
		if e := c.Until("error"); e["code"] != "document-archived" {
			t.Errorf("%v on archived: %v", frame["type"], e)
		}
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "hi"}), 409, "document-archived")
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 0, "source": "x"}), 409, "document-archived")
	// Reading goes on.
	c.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
	c.Until("plan:snapshot")

	ta.Do("POST", "/api/channels/"+ch.ID+"/restore", nil)
	if m := c.Until("session:channel"); m["canEdit"] != true {
		t.Errorf("restore broadcast %v", m)
	}
	c.Send(map[string]any{"type": "chat:send", "id": "x", "text": "back"})
	c.Until("ok")

	ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil)
	apptest.Want(t, ta.Do("DELETE", "/api/channels/"+ch.ID, nil), 204, "")
	c.Until("session:deleted")
	if code, reason := c.CloseCode(); code != room.CloseDeleted || reason != "This document was deleted." {
		t.Errorf("close %d %q", code, reason)
	}
}
