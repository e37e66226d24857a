package app

// One rule for text from outside, at every door (package textrule): bytes
// that are not UTF-8, and \u escapes of half a surrogate pair, are refused
// with the surface's own error, never repaired into U+FFFD; a plan and a
// comment's notes take no control character but tab and line feed
// (invalid-text); a title of only invisible characters is refused
// (invalid-title). Each refusal leaves everything as it was.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

const inboundPlan = "# Rules\n\nFirst block.\n\nSecond block.\n"

// invisibleTitles are titles with nothing a person could see.
var invisibleTitles = []string{"\u200b", "\u200b\u200c\u200d", "\u2060\ufeff", "\u3164", "\u00ad", "\u3000\u200b"}

func TestInputTextOverHTTP(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Rules")
	rev := ta.putPlan(t, ch.ID, 0, inboundPlan)

	for _, title := range invisibleTitles {
		apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": title}), 400, "invalid-title")
		apptest.Want(t, ta.Do("PATCH", "/api/channels/"+ch.ID, map[string]string{"title": title}), 400, "invalid-title")
	}
	// Half a surrogate pair is no more UTF-8 than a bad byte.
	for _, body := range []string{`{"title": "bad \ud800 half"}`, `{"title": "bad \udc00\ud83d"}`, "{\"title\": \"bad \xff\xfe\"}"} {
		apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", body), 400, "invalid-json")
	}
	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", `{"title": "Emoji \ud83d\ude80 plan"}`), 201, "")

	for _, source := range []string{"# Rules\n\nnul\x00here\n", "# Rules\n\nbell\a\n", "# Rules\n\n\x1b[31mred\n", "# Rules\n\ndel\x7f\n"} {
		r := ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": rev, "source": source})
		apptest.Want(t, r, 400, "invalid-text")
		if !strings.Contains(string(r.Body), "Line 3, column") {
			t.Errorf("%q: the refusal does not name the line: %s", source, r.Body)
		}
	}
	// Windows line endings and tabs are text.
	crlf := strings.ReplaceAll(inboundPlan, "\n", "\r\n") + "\tindented\r\n"
	rev = ta.putPlan(t, ch.ID, rev, crlf)
	if got := ta.plan(t, ch.ID).Source; got != inboundPlan+"\tindented\n" {
		t.Errorf("after a CRLF plan: %q", got)
	}

	// Notes: started and replied over HTTP.
	start := newThreadFor(t, ta.plan(t, ch.ID).Source, rev, "First block.", "ok")
	delete(start, "type")
	delete(start, "id")
	start["text"] = "nul\x00note"
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/comments", start), 400, "invalid-text")
	start["text"] = "A fine note."
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/comments", start)
	apptest.Want(t, r, 201, "")
	var th room.Thread
	r.JSON(t, &th)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+th.ID+"/reply", map[string]string{"text": "bell\a"}), 400, "invalid-text")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+th.ID+"/reply", `{"text": "half \udfff"}`), 400, "invalid-json")
	if notes := ta.threads(t, ch.ID).Threads[0].Notes; len(notes) != 1 {
		t.Errorf("refused replies were kept: %+v", notes)
	}
}

func TestInputTextOverTheSocket(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Rules")
	rev := ta.putPlan(t, ch.ID, 0, inboundPlan)
	rc := ta.DialRoom(ch.ID)
	rc.Until("comment:sync")
	rc.Send(newThreadFor(t, inboundPlan, rev, "First block.", "Why?"))
	thread := rc.Until("comment:started")["thread"].(string)

	reply := func(frame string) map[string]any {
		t.Helper()
		if err := rc.Conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		for {
			if m := rc.Next(); m["type"] == "ok" || m["type"] == "error" || m["type"] == "plan:ack" {
				return m
			}
		}
	}
	// Bytes that are not UTF-8, in a frame of any type, are refused as
	// malformed, with the request's id, and nothing is kept.
	for _, frame := range []string{
		"{\"type\": \"comment:reply\", \"id\": \"r1\", \"thread\": \"" + thread + "\", \"text\": \"bad \xff\xfe\"}",
		`{"type": "comment:reply", "id": "r1", "thread": "` + thread + `", "text": "half \ud800"}`,
		"{\"type\": \"chat:send\", \"id\": \"r1\", \"text\": \"@chopin \xc3\"}",
		"{\"type\": \"comment:typing\", \"id\": \"r1\", \"thread\": \"\xff\"}",
	} {
		if m := reply(frame); m["type"] != "error" || m["code"] != "malformed-message" || m["id"] != "r1" ||
			!strings.Contains(m["message"].(string), "UTF-8") && !strings.Contains(m["message"].(string), "surrogate") {
			t.Errorf("%q: %v, want malformed-message", frame, m)
		}
	}
	// Control characters in a note or in the plan are refused as such.
	if m := reply(`{"type": "comment:reply", "id": "r2", "thread": "` + thread + `", "text": "bell\u0007"}`); m["code"] != "invalid-text" {
		t.Errorf("a note with BEL: %v", m)
	}
	units := room.UTF16Len(inboundPlan)
	for _, insert := range []string{`"\u0000"`, `"a\u001bb"`, `"x\u007f"`, `"\u0007 bell"`} {
		m := reply(`{"type": "plan:push", "id": "p1", "version": ` + itoa64(rev) + `, "updates": [{"clientID": "c", "changes": [` +
			itoa64(int64(units)) + `, [0, ` + insert + `]]}]}`)
		if m["code"] != "invalid-text" || !strings.Contains(m["message"].(string), "Line 6, column") {
			t.Errorf("a push of %s: %v", insert, m)
		}
	}
	if m := reply(`{"type": "plan:push", "id": "p2", "version": ` + itoa64(rev) + `, "updates": [{"clientID": "c", "changes": [` +
		itoa64(int64(units)) + `, [0, "\tTab and", "line feed are text."]]}]}`); m["type"] != "plan:ack" {
		t.Errorf("a push of a tab and a line feed: %v", m)
	}
	if got := ta.plan(t, ch.ID).Source; got != inboundPlan+"\tTab and\nline feed are text." {
		t.Errorf("the plan after the refusals: %q", got)
	}
	if notes := ta.threads(t, ch.ID).Threads[0].Notes; len(notes) != 1 || notes[0].Text != "Why?" {
		t.Errorf("the thread after the refusals: %+v", notes)
	}
}

func TestInputTextOverMCP(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Rules")
	rev := ta.putPlan(t, doc.ID, 0, inboundPlan)
	auth := "Bearer " + ta.Token()
	init := ta.mcpRaw("POST", initializeBody, map[string]string{"Authorization": auth})
	session := map[string]string{"Authorization": auth, "Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	ta.mcpRaw("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)

	for i, title := range []string{"bad \xff\xfe utf8", `half \ud800`} {
		body := `{"jsonrpc":"2.0","id":` + itoa64(int64(10+i)) + `,"method":"tools/call","params":{"name":"rename_document","arguments":{"id":"` +
			doc.ID + `","title":"` + title + `"}}}`
		wantRPCError(t, "rename_document "+title, ta.mcpRaw("POST", body, session), 200, -32602, itoa64(int64(10+i)))
	}
	if got := ta.channelNow(t, doc.ID).Title; got != "Rules" {
		t.Errorf("the title after the refusals: %q", got)
	}

	cs := ta.mcpSession("rules")
	for _, title := range invisibleTitles {
		wantRefusal(t, callTool(t, cs, "rename_document", map[string]any{"id": doc.ID, "title": title}), "invalid-title")
		wantRefusal(t, callTool(t, cs, "create_document", map[string]any{"repository": "octo/plans", "title": title, "idempotencyKey": "k" + title, "plan": "# Plan\n"}), "invalid-title")
	}
	o := callTool(t, cs, "update_document", map[string]any{"id": doc.ID, "revision": rev, "plan": "# Rules\n\nnul\x00here\n", "idempotencyKey": "u1"})
	wantRefusal(t, o, "invalid-text")
	if got := ta.plan(t, doc.ID).Source; got != inboundPlan {
		t.Errorf("the plan after the refusal: %q", got)
	}
}

// The agent link: a frame that is not UTF-8 closes the link as the spec
// says (agentconn's TestFrameRefusals); a Planner's edit_plan that writes a
// control character, or whose input holds half a surrogate pair, is a
// failed tool call that changes nothing.
func TestInputTextOverTheAgentLink(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	rev := ta.putPlan(t, ch.ID, 0, inboundPlan)
	results := make(chan error, 3)
	turn := func(ctx context.Context, tn *client.Turn) error {
		if tn.Session.Mode == wire.ModeIsolated {
			return tn.Text(descriptionJSON("Plan for rules"))
		}
		content := "Bell\a block."
		_, err := tn.CallTool(ctx, "edit_plan", room.EditPlanArgs{Revision: rev, Operations: []room.Operation{
			{Op: room.OpInsertRoot, Content: &content}}})
		results <- err
		_, err = tn.CallToolID(ctx, "raw", "edit_plan", `{"revision": `+itoa64(rev)+`, "operations": [{"op": "insert_root", "content": "half \ud800"}]}`)
		results <- err
		ok := "A fine block.\tTabbed."
		_, err = tn.CallTool(ctx, "edit_plan", room.EditPlanArgs{Revision: rev, Operations: []room.Operation{
			{Op: room.OpInsertRoot, Content: &ok}}})
		results <- err
		return tn.Text("Done.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: ch.ID, Handler: client.Handler{Turn: turn}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ta.waitAttached(browser, ch.ID)
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin add a block"})
	for i, want := range []string{"the control character U+0007 (BEL)", "surrogate", ""} {
		err := <-results
		var te *client.ToolResultError
		switch {
		case want == "" && err != nil:
			t.Errorf("call %d: %v", i, err)
		case want != "" && (!errors.As(err, &te) || !strings.Contains(string(te.Output), want)):
			t.Errorf("call %d: %v, want a refusal with %q", i, err, want)
		}
	}
	if got := ta.plan(t, ch.ID).Source; got != inboundPlan+"\nA fine block.\tTabbed.\n" {
		t.Errorf("the plan after the refusals: %q", got)
	}
}

func (ta *testApp) plan(t *testing.T, id string) room.Plan {
	t.Helper()
	var p room.Plan
	ta.Do("GET", "/api/channels/"+id+"/plan", nil).JSON(t, &p)
	return p
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
