package app

// Exact changes against the real app: a whole new plan sent by HTTP PUT or
// MCP's update_document reaches every tab as a change of only what changed,
// and comment threads move through it accordingly; a dismissed thread
// keeps moving with the text, in the HTTP list, in comment:sync and after
// a restart.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// startOn opens a thread on quote from tab and returns its id.
func startOn(t *testing.T, tab *apptest.Room, source string, version int64, quote string) string {
	t.Helper()
	tab.Send(newThreadFor(t, source, version, quote, "About "+quote))
	id, _ := tab.Until("comment:started")["thread"].(string)
	if id == "" {
		t.Fatalf("no thread on %q", quote)
	}
	return id
}

// changesOf is the JSON of the changes of the one update of a plan:updates.
func changesOf(t *testing.T, frame map[string]any) string {
	t.Helper()
	us := frame["updates"].([]any)
	if len(us) != 1 {
		t.Fatalf("plan:updates with %d updates", len(us))
	}
	raw, _ := json.Marshal(us[0].(map[string]any)["changes"])
	return string(raw)
}

func threadOf(t *testing.T, sync room.CommentSync, id string) room.Thread {
	t.Helper()
	for _, th := range sync.Threads {
		if th.ID == id {
			return th
		}
	}
	t.Fatalf("no thread %s in %+v", id, sync)
	return room.Thread{}
}

func TestWholePlanEditsChangeOnlyWhatChanged(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	const v1 = "# Plan\n\nUse Postgres for everything, and keep backups daily.\n\nShip in May.\n\nNone yet.\n"
	const v2 = "# Plan\n\nUse SQLite for everything, and keep backups daily.\n\nShip in May.\n\nNone yet, but see below.\n"
	const v3 = "# Plan\n\nUse SQLite for everything, and keep backups daily.\n\n## Dates\n\nShip in June.\n\nNone yet, but see below.\n"
	rev := ta.putPlan(t, ch.ID, 0, v1)
	tab := ta.DialRoom(ch.ID)
	tab.Until("comment:sync")
	ids := map[string]string{}
	for _, q := range []string{"Postgres", "keep backups daily", "Ship in May."} {
		ids[q] = startOn(t, tab, v1, rev, q)
	}

	// An HTTP PUT: the words that changed, nothing else.
	rev = ta.putPlan(t, ch.ID, rev, v2)
	want := `[12,[8,"SQLite"],64,[0,", but see below"],2]`
	if got := changesOf(t, tab.Until("plan:updates")); got != want {
		t.Errorf("the PUT reached the tab as %s, want %s", got, want)
	}
	sync := ta.threads(t, ch.ID)
	if p := threadOf(t, sync, ids["Postgres"]).Passage; p.State != room.AnchorChanged || v2[p.From:p.To] != "SQLite" {
		t.Errorf("the thread on the replaced word: %+v", p)
	}
	if p := threadOf(t, sync, ids["keep backups daily"]).Passage; p.State != room.AnchorExact || v2[p.From:p.To] != "keep backups daily" {
		t.Errorf("the thread on words the PUT kept: %+v", p)
	}

	// MCP's update_document: a heading inserted, one word changed.
	cs := ta.mcpSession("exact")
	wantOK(t, callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": rev, "plan": v3, "idempotencyKey": "u1"}), "update_document")
	head := room.UTF16Len("# Plan\n\nUse SQLite for everything, and keep backups daily.\n\n")
	want = `[` + itoa(head) + `,[0,"## Dates","",""],8,[3,"June"],` + itoa(room.UTF16Len(".\n\nNone yet, but see below.\n")) + `]`
	if got := changesOf(t, tab.Until("plan:updates")); got != want {
		t.Errorf("update_document reached the tab as %s, want %s", got, want)
	}
	if p := threadOf(t, ta.threads(t, ch.ID), ids["Ship in May."]).Passage; p.State != room.AnchorChanged || v3[p.From:p.To] != "Ship in June." {
		t.Errorf("the thread on the changed date: %+v", p)
	}
}

// TestDismissedThreadMovesInTheApp: dismiss a thread on "More text", then
// insert two lines at the start: the HTTP list and comment:sync give it at
// the current version, where the text went, and so does a restart.
func TestDismissedThreadMovesInTheApp(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	const source = "# Plan\n\nSome text.\n\nMore text to come.\n"
	rev := ta.putPlan(t, ch.ID, 0, source)
	tab := ta.DialRoom(ch.ID)
	tab.Until("comment:sync")
	id := startOn(t, tab, source, rev, "More text")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+id+"/dismiss", nil), 200, "")

	tab.Send(map[string]any{"type": "plan:push", "id": "p1", "version": rev,
		"updates": []map[string]any{{"clientID": "tab", "changes": json.RawMessage(changeSetJSON(len(source), 0, 0, "Intro.\n\n"))}}})
	rev = int64(tab.Until("plan:ack")["version"].(float64))
	text := "Intro.\n\n" + source
	want := room.Passage{From: strings.Index(text, "More text"), To: strings.Index(text, "More text") + len("More text"),
		Version: rev, Quote: "More text", State: room.AnchorExact, StartLine: 7, EndLine: 7}
	check := func(when string, sync room.CommentSync) {
		t.Helper()
		got := threadOf(t, sync, id)
		want.Blocks = got.Passage.Blocks
		if sync.Version != rev || got.Status != room.ThreadDismissed || !passageEqual(got.Passage, want) {
			t.Errorf("%s: version %d, %s thread at %+v\nwant version %d, %+v", when, sync.Version, got.Status, got.Passage, rev, want)
		}
	}
	check("the HTTP list", ta.threads(t, ch.ID))
	tab.Send(map[string]any{"type": "comment:sync", "id": "s1"})
	var sync room.CommentSync
	raw, _ := json.Marshal(tab.Until("comment:sync"))
	json.Unmarshal(raw, &sync)
	check("comment:sync", sync)

	cfg := ta.app.cfg
	ta.Stop()
	ta = startAppWith(t, cfg)
	check("after a restart", ta.threads(t, ch.ID))
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
