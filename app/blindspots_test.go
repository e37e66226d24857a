package app

// Edges of the last round's surfaces, each through the real app: a search
// query holding a double quote, a browser session signed out while the app
// still has it cached, read_document with an offset, limit or column of 0,
// an MCP session whose token is rotated under it (the request right after
// the rotation, before the once-a-second watch could notice), and the
// bounds of a comment's passage and note at their exact values.

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/room"
)

// TestSearchQueryHoldingAQuote: a double quote in a query is text to find,
// in titles and plan lines alike (the index reads a query as one quoted
// phrase), and in the listing's query too.
func TestSearchQueryHoldingAQuote(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	titled := ta.CreateDocument("octo/plans", `Say "hello" loudly`)
	planned := ta.CreateDocument("octo/plans", "Flags")
	ta.putPlan(t, planned.ID, 0, "# Flags\n\nRun it with \"--force\" only once.\n")

	search := func(q string) searchAnswer {
		t.Helper()
		r := ta.Do("GET", "/api/search?q="+url.QueryEscape(q), nil)
		apptest.Want(t, r, 200, "")
		var a searchAnswer
		r.JSON(t, &a)
		return a
	}
	for _, q := range []string{`"hello"`, `say "hel`, `o" loud`, `"`} {
		got := search(q)
		if len(got.Results) != 1 || got.Results[0].Channel.ID != titled.ID || got.Results[0].Match.Field != "title" {
			t.Errorf("search %s: %+v", q, got)
		}
	}
	// The plan's text is indexed at the room's checkpoint, once the edit's
	// room has let it go.
	var got searchAnswer
	for deadline := time.Now().Add(apptest.Wait); ; time.Sleep(20 * time.Millisecond) {
		if got = search(`"--force"`); len(got.Results) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(got.Results) != 1 || got.Results[0].Channel.ID != planned.ID ||
		got.Results[0].Match != (searchMatchJSON{Field: "plan", Line: 3, Text: `Run it with "--force" only once.`}) {
		t.Errorf(`search "--force": %+v`, got)
	}
	if hits := ta.list(t, `"hello"`); len(hits) != 1 || hits[0].ID != titled.ID {
		t.Errorf(`listing "hello": %+v`, hits)
	}
	if hits := ta.list(t, `o" l`); len(hits) != 1 || hits[0].ID != titled.ID {
		t.Errorf(`listing o" l: %+v`, hits)
	}
}

// TestSignedOutSessionIsNotKeptByTheCache: a browser's session, just used
// (so the app has it cached), is refused on its next request once every
// browser was signed out by a script, as `chopin open
// --sign-out-everywhere` does through a running Chopin.
func TestSignedOutSessionIsNotKeptByTheCache(t *testing.T) {
	ta := startApp(t)
	apptest.Want(t, ta.Do("GET", "/api/repositories", nil), 200, "")
	r := ta.Request(&http.Client{}, "POST", "/api/session/sign-out-everywhere", nil,
		map[string]string{"Authorization": "Bearer " + ta.Token()})
	apptest.Want(t, r, 200, "")
	apptest.Want(t, ta.Do("GET", "/api/repositories", nil), 401, "unauthorized")
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "octo/plans"}), 401, "unauthorized")
}

// TestMCPReadDocumentZeroPaging: offset, limit and column are whole numbers
// from 1; 0 is a malformed call (-32602) that says which, never read as
// "from the start" or "no limit".
func TestMCPReadDocumentZeroPaging(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	ta.putPlan(t, ch.ID, 0, "# Launch\n\nOne.\n\nTwo.\n")
	cs := ta.mcpSession("paging")
	for _, name := range []string{"offset", "limit", "column"} {
		_, err := callToolErr(cs, "read_document", map[string]any{"id": ch.ID, name: 0})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, name+" must be a whole number, at least 1") {
			t.Errorf("%s 0: got %v, want -32602 naming %s", name, err, name)
		}
	}
	// 1 is the least each takes.
	out := callTool(t, cs, "read_document", map[string]any{"id": ch.ID, "offset": 1, "limit": 1, "column": 1})
	if out.IsError || !strings.Contains(out.Text, "\ntext:\n# Launch") || strings.Contains(out.Text, "One.") {
		t.Errorf("offset 1, limit 1, column 1: %q", out.Text)
	}
}

// TestMCPTokenRotatedUnderASession: an MCP session opened with the agent
// token loses it at the very next request after `chopin token --rotate`,
// without waiting for the app's once-a-second look at the token's file;
// the session itself goes on with the new token.
func TestMCPTokenRotatedUnderASession(t *testing.T) {
	ta := startApp(t)
	token := ta.Token()
	init := ta.mcpPost(initializeBody, map[string]string{"Authorization": "Bearer " + token})
	apptest.Want(t, init, 200, "")
	as := func(token string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	}
	apptest.Want(t, ta.mcpPost(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, as(token)), 202, "")
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	apptest.Want(t, ta.mcpPost(list, as(token)), 200, "")
	for range 3 { // each rotation is seen by the request right after it
		newToken, err := instance.RotateAgentToken(ta.app.cfg.ConfigDir)
		if err != nil {
			t.Fatal(err)
		}
		if r := ta.mcpPost(list, as(token)); r.Status != 401 {
			t.Fatalf("the old token right after the rotation: %d %s", r.Status, r.Body)
		}
		token = newToken
		if r := ta.mcpPost(list, as(token)); r.Status != 200 || !strings.Contains(string(r.Body), `"read_document"`) {
			t.Fatalf("the new token on the same session: %d %s", r.Status, r.Body)
		}
	}
}

// TestTokenRotatedForTheAPI: the HTTP API, like /mcp, refuses the old token
// on the request right after a rotation and takes the new one.
func TestTokenRotatedForTheAPI(t *testing.T) {
	ta := startApp(t)
	as := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	token := ta.Token()
	apptest.Want(t, ta.Request(&http.Client{}, "GET", "/api/repositories", nil, as(token)), 200, "")
	for range 3 {
		newToken, err := instance.RotateAgentToken(ta.app.cfg.ConfigDir)
		if err != nil {
			t.Fatal(err)
		}
		apptest.Want(t, ta.Request(&http.Client{}, "GET", "/api/repositories", nil, as(token)), 401, "unauthorized")
		token = newToken
		apptest.Want(t, ta.Request(&http.Client{}, "GET", "/api/repositories", nil, as(token)), 200, "")
	}
}

// TestCommentPassageAndNoteBounds: a passage of no characters is refused
// (there is nothing to comment on), and a note is bounded in bytes of
// UTF-8 after trimming: exactly 8 KiB is taken, one byte more is refused,
// as the first note and as a reply alike.
func TestCommentPassageAndNoteBounds(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	rev := ta.putPlan(t, ch.ID, 0, commentPlan)
	start := func(quote, text string, edit func(map[string]any)) apptest.Response {
		t.Helper()
		body := newThreadFor(t, commentPlan, rev, quote, text)
		delete(body, "type")
		delete(body, "id")
		if edit != nil {
			edit(body)
		}
		return ta.Do("POST", "/api/channels/"+ch.ID+"/comments", body)
	}
	r := start("Postgres", "Why?", func(b map[string]any) { b["to"], b["quote"] = b["from"], "" })
	apptest.Want(t, r, 400, "invalid-passage")
	if !strings.Contains(string(r.Body), "Select some text to comment on.") {
		t.Errorf("a passage of no characters: %s", r.Body)
	}

	exact := strings.Repeat("é", room.MaxCommentNoteBytes/2) // 8,192 bytes, 4,096 characters
	r = start("Postgres", " \n"+exact+"\n ", nil)
	apptest.Want(t, r, 201, "")
	var th room.Thread
	r.JSON(t, &th)
	if len(th.Notes) != 1 || th.Notes[0].Text != exact {
		t.Fatalf("the 8 KiB note was not kept as it is: %d notes", len(th.Notes))
	}
	apptest.Want(t, start("rocket", exact+"a", nil), 413, "comment-too-large")
	reply := func(text string) apptest.Response {
		return ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+th.ID+"/reply", map[string]string{"text": text})
	}
	apptest.Want(t, reply(exact), 200, "")
	r = reply(exact + "a")
	apptest.Want(t, r, 413, "comment-too-large")
	var e struct{ Message string }
	json.Unmarshal(r.Body, &e)
	if e.Message != "A comment holds at most 8192 bytes of text; this one has 8193." {
		t.Errorf("the refusal says %q", e.Message)
	}
	if got := ta.threads(t, ch.ID).Threads; len(got) != 1 || len(got[0].Notes) != 2 {
		t.Errorf("threads after the refusals: %+v", got)
	}
}
