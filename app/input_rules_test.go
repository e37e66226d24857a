package app

import (
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// The small rules of what Chopin takes: each refusal in its documented code.
func TestInputRules(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Rules")

	for _, title := range []string{"nul\x00here", "two\nlines", "tab\there", "bell\a", "right\u202eleft", "iso\u2066late\u2069", "c1\u0085mid"} {
		apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": title}), 400, "invalid-title")
		apptest.Want(t, ta.Do("PATCH", "/api/channels/"+ch.ID, map[string]string{"title": title}), 400, "invalid-title")
	}
	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "Ünïcödé plan ✓"}), 201, "")

	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", "{\"title\": \"bad \xff\xfe bytes\"}"), 400, "invalid-json")
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", "{\"revision\": 0, \"source\": \"# A\xc3\"}"), 400, "invalid-json")

	for _, empty := range []string{"", "\n\n", "   \n"} {
		apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 0, "source": empty}), 400, "empty-document")
	}
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 0, "source": "# Kept\n"}), 200, "")

	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/channels?cursor=%%%", nil), 400, "invalid-cursor")
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/channels?cursor=abc", nil), 400, "invalid-cursor")
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/channels?query=%zz", nil), 400, "invalid-argument")
}

// A clientID is up to 128 characters, however many bytes they take.
func TestClientIDCountsCharacters(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Client IDs")
	rc := ta.DialRoom(ch.ID)
	snap := rc.OpenPlan()
	length := len([]rune(snap["source"].(string)))
	push := func(id, clientID string, version int) map[string]any {
		rc.Send(map[string]any{"type": "plan:push", "id": id, "version": version,
			"updates": []any{map[string]any{"clientID": clientID, "changes": []any{length, []any{0, "x", ""}}}}})
		for {
			if m := rc.Next(); m["id"] == id && (m["type"] == "plan:ack" || m["type"] == "error") {
				return m
			}
		}
	}
	if m := push("p1", strings.Repeat("é", 128), int(snap["version"].(float64))); m["type"] != "plan:ack" {
		t.Fatalf("128 characters (256 bytes): %v", m)
	}
	length += 2
	if m := push("p2", strings.Repeat("é", 129), int(snap["version"].(float64))+1); m["code"] != "malformed-message" {
		t.Fatalf("129 characters: %v", m)
	}
}

// A push holds at most room.MaxPushUpdates updates.
func TestPushUpdatesAreBounded(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Pushes")
	rc := ta.DialRoom(ch.ID)
	snap := rc.OpenPlan()
	length := len([]rune(snap["source"].(string)))
	version := int(snap["version"].(float64))
	push := func(id string, n int) map[string]any {
		updates := make([]any, n)
		for i := range updates {
			updates[i] = map[string]any{"clientID": "c", "changes": []any{length}}
		}
		rc.Send(map[string]any{"type": "plan:push", "id": id, "version": version, "updates": updates})
		for {
			if m := rc.Next(); m["id"] == id && (m["type"] == "plan:ack" || m["type"] == "error") {
				return m
			}
		}
	}
	if m := push("over", room.MaxPushUpdates+1); m["code"] != "invalid-changes" {
		t.Fatalf("%d updates: %v", room.MaxPushUpdates+1, m)
	}
	if m := push("at", room.MaxPushUpdates); m["type"] != "plan:ack" {
		t.Fatalf("%d updates: %v", room.MaxPushUpdates, m)
	}
}
