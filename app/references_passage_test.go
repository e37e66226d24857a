package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

const launchSource = "# Launch plan\n\n## Goals\n\nShip the beta to ten teams.\n\n## Risks\n\nThe API may change. Budget is tight.\n"

// u16 is the UTF-16 offset of the first occurrence of sub in s.
func u16(t *testing.T, s, sub string) int {
	t.Helper()
	i := strings.Index(s, sub)
	if i < 0 {
		t.Fatalf("%q not in %q", sub, s)
	}
	return len(utf16.Encode([]rune(s[:i])))
}

// passageNow reads where the passage of message id's reference i is now.
func passageNow(t *testing.T, ta *testApp, channel, id string, i int) room.PassageNow {
	t.Helper()
	var out struct {
		References []struct {
			room.Reference
			Now *room.PassageNow
		}
	}
	ta.Do("GET", "/api/channels/"+channel+"/messages/"+id+"/references", nil).JSON(t, &out)
	if len(out.References) <= i || out.References[i].Now == nil {
		t.Fatalf("references of %s: %+v", id, out)
	}
	return *out.References[i].Now
}

// putPlan replaces a document's plan and returns its new revision.
func putPlan(t *testing.T, ta *testApp, id string, revision int64, source string) int64 {
	t.Helper()
	var out struct{ Revision int64 }
	r := ta.Do("PUT", "/api/channels/"+id+"/plan", map[string]any{"revision": revision, "source": source})
	apptest.Want(t, r, 200, "")
	r.JSON(t, &out)
	return out.Revision
}

// TestPassageReferences: a message refers to a passage of another plan,
// picked from the document's blocks; Chat keeps its quote, lines, heading
// and block digests; read later, the passage is found where it is now:
// moved by an edit before it, reading anew after an edit inside it, not
// moved by one after it, and deleted when its text is. Bad passages are
// refused and keep nothing.
func TestPassageReferences(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	launch := ta.CreateDocument("octo/plans", "Launch plan")
	rev := putPlan(t, ta, launch.ID, 0, launchSource)
	here := ta.CreateDocument("octo/plans", "Rollout")

	// The picker lists the blocks, each under its heading.
	var choices struct {
		Revision int64
		Title    string
		Blocks   []room.PassageChoice
	}
	ta.Do("GET", "/api/channels/"+launch.ID+"/passages", nil).JSON(t, &choices)
	if choices.Revision != rev || choices.Title != "Launch plan" || len(choices.Blocks) != 5 {
		t.Fatalf("passages: %+v", choices)
	}
	goal := choices.Blocks[2]
	want := room.PassageChoice{Index: 2, Type: "paragraph", From: u16(t, launchSource, "Ship"), To: u16(t, launchSource, "\n\n## Risks"),
		StartLine: 5, EndLine: 5, Heading: "Goals", Words: "Ship the beta to ten teams."}
	if goal != want {
		t.Fatalf("the Goals paragraph: %+v, want %+v", goal, want)
	}

	tab := ta.DialRoom(here.ID)
	tab.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "Is this still true?",
		"references": []any{map[string]any{"kind": "passage", "channelId": launch.ID, "from": goal.From, "to": goal.To, "revision": rev},
			map[string]any{"kind": "document", "channelId": launch.ID}}})
	msg := tab.Until("chat:message")["message"].(map[string]any)
	refs := room.MessageReferences(roomMessage(t, msg))
	if len(refs) != 2 || refs[0].Kind != "passage" || refs[1].Kind != "document" || refs[1].Passage != nil {
		t.Fatalf("references: %+v", refs)
	}
	p := refs[0].Passage
	if p == nil || p.Quote != "Ship the beta to ten teams." || p.StartLine != 5 || p.EndLine != 5 || p.Heading != "Goals" ||
		p.From != goal.From || p.To != goal.To || len(p.Blocks) != 1 || p.Blocks[0].Index != 2 ||
		p.Blocks[0].Digest != room.Digest("Ship the beta to ten teams.") || refs[0].ObservedRevision != rev {
		t.Fatalf("the passage kept: %+v", p)
	}
	id := msg["id"].(string)
	now := passageNow(t, ta, here.ID, id, 0)
	if now.State != room.AnchorExact || now.From != goal.From || now.StartLine != 5 || now.Found != room.FoundByHistory {
		t.Fatalf("unchanged: %+v", now)
	}

	// An edit before it moves it; one inside it changes how it reads; one
	// after it leaves it be.
	text := strings.Replace(launchSource, "## Goals\n", "Owner: Ana.\n\n## Goals\n", 1)
	rev = putPlan(t, ta, launch.ID, rev, text)
	now = passageNow(t, ta, here.ID, id, 0)
	if now.State != room.AnchorExact || now.From != u16(t, text, "Ship") || now.StartLine != 7 || now.EndLine != 7 || now.Heading != "Goals" {
		t.Fatalf("after an edit before it: %+v", now)
	}
	text = strings.Replace(text, "ten teams", "twelve teams", 1)
	rev = putPlan(t, ta, launch.ID, rev, text)
	now = passageNow(t, ta, here.ID, id, 0)
	if now.State != room.AnchorChanged || now.Quote != "Ship the beta to twelve teams." || now.StartLine != 7 {
		t.Fatalf("after an edit inside it: %+v", now)
	}
	text += "\n## Later\n\nMore.\n"
	rev = putPlan(t, ta, launch.ID, rev, text)
	if again := passageNow(t, ta, here.ID, id, 0); again.From != now.From || again.To != now.To || again.State != room.AnchorChanged {
		t.Fatalf("after an edit after it: %+v, was %+v", again, now)
	}

	// Deleted, it says so; the message keeps what it quoted.
	text = strings.Replace(text, "Ship the beta to twelve teams.\n\n", "", 1)
	rev = putPlan(t, ta, launch.ID, rev, text)
	if now = passageNow(t, ta, here.ID, id, 0); now.State != room.AnchorOrphaned || now.StartLine != 0 {
		t.Fatalf("after its text was deleted: %+v", now)
	}

	// Refused, with the reason, and nothing kept.
	passage := func(from, to int, revision int64) map[string]any {
		return map[string]any{"kind": "passage", "channelId": launch.ID, "from": from, "to": to, "revision": revision}
	}
	end := len(utf16.Encode([]rune(text)))
	for _, tc := range []struct {
		ref  map[string]any
		code string
		text string
	}{
		{passage(0, end+1, rev), "invalid-passage", "The passage of “Launch plan” ends outside its plan, which is " + itoa(end) + " characters long"},
		{passage(4, 4, rev), "invalid-passage", "The passage of “Launch plan” is empty (from 4, to 4)"},
		{passage(0, 4, rev-1), "stale-revision", "“Launch plan” changed since the passage was picked (revision " + itoa(int(rev-1)) + "; it is now at revision " + itoa(int(rev)) + "). Pick the passage again."},
		{passage(u16(t, text, "\n\n## Goals")+1, u16(t, text, "## Goals")+2, rev), "invalid-passage", "starts or ends on a blank line between blocks"},
		{map[string]any{"kind": "document", "channelId": launch.ID, "from": 0}, "invalid-argument", "A reference to a whole document takes no from, to or revision"},
	} {
		r := ta.Do("POST", "/api/channels/"+here.ID+"/messages", map[string]any{"text": "See", "references": []any{tc.ref}})
		apptest.Want(t, r, map[string]int{"invalid-passage": 400, "stale-revision": 409, "invalid-argument": 400}[tc.code], tc.code)
		if !strings.Contains(string(r.Body), tc.text) {
			t.Errorf("%v: %s, want %q", tc.ref, r.Body, tc.text)
		}
	}
	var msgs struct{ Messages []map[string]any }
	ta.Do("GET", "/api/channels/"+here.ID+"/messages", nil).JSON(t, &msgs)
	if len(msgs.Messages) != 1 {
		t.Fatalf("%d messages kept, want the one sent", len(msgs.Messages))
	}
}

// TestPassageReferencePruned: once the history that would move a passage
// is pruned, the passage is found by its block's digest, then by its quote
// where that occurs once, else it is deleted or rewritten.
func TestPassageReferencePruned(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	launch := ta.CreateDocument("octo/plans", "Launch plan")
	rev := putPlan(t, ta, launch.ID, 0, launchSource)
	here := ta.CreateDocument("octo/plans", "Rollout")
	send := func(from, to int) string {
		var m map[string]any
		r := ta.Do("POST", "/api/channels/"+here.ID+"/messages", map[string]any{"text": "See",
			"references": []any{map[string]any{"kind": "passage", "channelId": launch.ID, "from": from, "to": to}}})
		apptest.Want(t, r, 201, "")
		r.JSON(t, &m)
		return m["id"].(string)
	}
	goal := send(u16(t, launchSource, "Ship"), u16(t, launchSource, "\n\n## Risks")) // a whole block
	api := send(u16(t, launchSource, "The API"), u16(t, launchSource, " Budget is")) // a sentence inside one
	budget := send(u16(t, launchSource, "Budget"), u16(t, launchSource, "tight.")+6)

	// The Goals block moves down; the Risks paragraph's first sentence
	// stays but the rest of its block is rewritten; so is the budget.
	text := strings.Replace(launchSource, "## Goals\n", "Owner: Ana.\n\n## Goals\n", 1)
	rev = putPlan(t, ta, launch.ID, rev, text)
	text = strings.Replace(text, "Budget is tight.", "Money is fine.", 1)
	rev = putPlan(t, ta, launch.ID, rev, text)
	prune := store.HistoryPrune{Through: rev, Keep: []int64{rev}, Snapshots: map[int64]string{rev: text}}
	if err := ta.app.store.PruneHistory(context.Background(), launch.ID, prune); err != nil {
		t.Fatal(err)
	}

	if now := passageNow(t, ta, here.ID, goal, 0); now.Found != room.FoundByBlock || now.State != room.AnchorExact ||
		now.From != u16(t, text, "Ship") || now.StartLine != 7 || now.Heading != "Goals" {
		t.Errorf("the whole block, history pruned: %+v", now)
	}
	if now := passageNow(t, ta, here.ID, api, 0); now.Found != room.FoundByQuote || now.State != room.AnchorExact ||
		now.From != u16(t, text, "The API") || now.Quote != "The API may change." {
		t.Errorf("a sentence of a rewritten block, history pruned: %+v", now)
	}
	if now := passageNow(t, ta, here.ID, budget, 0); now.State != room.AnchorOrphaned {
		t.Errorf("rewritten text, history pruned: %+v", now)
	}
}

// roomMessage is a message frame's message, decoded.
func roomMessage(t *testing.T, m map[string]any) room.Message {
	t.Helper()
	js, _ := json.Marshal(m)
	var out room.Message
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
