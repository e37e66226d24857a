package app

// GET /api/search through the real app: a word typed into a plan is found
// once the room has checkpointed it (its last member left), with its line;
// the repository filter, the order (archived last) and the bounds.

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

type searchAnswer struct {
	Results []searchResultJSON `json:"results"`
}

func TestSearchAPI(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ta.AddRepository("octo/other")
	doc := ta.CreateDocument("octo/plans", "Storage")
	old := ta.CreateDocument("octo/plans", "Old zephyr notes")
	ta.CreateDocument("octo/other", "Elsewhere")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+old.ID+"/archive", nil), 200, "")

	// A person types a line into the plan and leaves: the room's last
	// checkpoint writes the text and its index row together.
	rc := ta.DialRoom(doc.ID)
	snap := rc.OpenPlan()
	length := len([]rune(snap["source"].(string)))
	rc.Send(map[string]any{"type": "plan:push", "id": "p1", "version": snap["version"],
		"updates": []any{map[string]any{"clientID": "c1", "changes": []any{length, []any{0, "", "Move the Zephyr queue to SQLite."}}}}})
	if m := rc.Until("plan:ack"); m["id"] != "p1" {
		t.Fatalf("push: %v", m)
	}
	rc.Conn.Close()

	search := func(query string) searchAnswer {
		t.Helper()
		r := ta.Do("GET", "/api/search?"+query, nil)
		apptest.Want(t, r, 200, "")
		var a searchAnswer
		r.JSON(t, &a)
		return a
	}
	var got searchAnswer
	for deadline := time.Now().Add(apptest.Wait); ; time.Sleep(20 * time.Millisecond) {
		if got = search("q=zephyr"); len(got.Results) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(got.Results) != 2 {
		t.Fatalf("zephyr: %+v", got)
	}
	first, second := got.Results[0], got.Results[1]
	if first.Channel.ID != doc.ID || first.Repository != "octo/plans" ||
		first.Match != (searchMatchJSON{Field: "plan", Line: 3, Text: "Move the Zephyr queue to SQLite."}) {
		t.Errorf("plan match: %+v", first)
	}
	if second.Channel.ID != old.ID || second.Channel.ArchivedAt == nil || second.Match.Field != "title" {
		t.Errorf("the archived document comes last, by its title: %+v", second)
	}
	r := ta.Do("GET", "/api/search?q=zephyr&limit=1", nil)
	if !strings.Contains(string(r.Body), `"match":{"field":"plan","line":3,"text":"Move the Zephyr queue to SQLite."}`) {
		t.Errorf("wire form: %s", r.Body)
	}

	if got = search("q=zephyr&repository=octo/other"); len(got.Results) != 0 {
		t.Errorf("another repository: %+v", got)
	}
	if got = search("q=ELSEWHERE&repository=" + url.QueryEscape("OCTO/Other")); len(got.Results) != 1 {
		t.Errorf("one repository: %+v", got)
	}
	for _, bad := range []struct {
		query, code string
		status      int
	}{
		{"", "invalid-query", 400},
		{"q=%20%20", "invalid-query", 400},
		{"q=" + strings.Repeat("x", 201), "invalid-query", 400},
		{"q=x&limit=0", "invalid-limit", 400},
		{"q=x&limit=51", "invalid-limit", 400},
		{"q=x&limit=ten", "invalid-limit", 400},
		{"q=x&repository=nope", "invalid-repository", 400},
		{"q=x&repository=octo/nope", "repository-not-found", 404},
		{"q=%zz", "invalid-argument", 400},
	} {
		apptest.Want(t, ta.Do("GET", "/api/search?"+bad.query, nil), bad.status, bad.code)
	}
}
