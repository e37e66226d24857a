package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// inRoom runs fn with the document's room, as the app's own handlers do.
func (ta *testApp) inRoom(t *testing.T, id string, fn func(r *room.Room) error) {
	t.Helper()
	ctx := context.Background()
	ch, err := ta.app.store.Channel(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := ta.app.hub.Do(ctx, ta.app.roomChannel(ch), fn); err != nil {
		t.Fatal(err)
	}
}

// serverEdit makes the plan read text, as author, through the room like
// the Planner's and MCP's edits; it answers the new revision.
func (ta *testApp) serverEdit(t *testing.T, id string, author room.Author, text string) int64 {
	t.Helper()
	var v int64
	ta.inRoom(t, id, func(r *room.Room) error {
		var err error
		rev, _ := r.Source()
		v, err = r.ReplaceText(room.WithAuthor(context.Background(), author), rev, text)
		return err
	})
	return v
}

// revertConflict is a 409 revert-conflict's body.
type revertConflict struct {
	Code      string
	Message   string
	Conflicts []room.RevertConflict
}

// lastChatLine is the newest Chat message's text.
func (ta *testApp) lastChatLine(t *testing.T, id string) string {
	t.Helper()
	var list struct{ Messages []room.Message }
	ta.Do("GET", "/api/channels/"+id+"/messages", nil).JSON(t, &list)
	if len(list.Messages) == 0 {
		return ""
	}
	return list.Messages[len(list.Messages)-1].Text
}

// TestRevertVersion: one change undone on top of later ones that do not
// touch it; refused, naming each later change in the way and where it is,
// when they do; a version without a kept change is not found; an archived
// plan refuses.
func TestRevertVersion(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Undo")
	planner := room.Author{Kind: room.AuthorPlanner, Turn: "turn-1", Model: "qwen"}
	person := room.Author{Kind: room.AuthorPerson, Name: "ada"}

	ta.serverEdit(t, ch.ID, person, "# Undo\n\nOne.\n")                                    // 1
	ta.serverEdit(t, ch.ID, planner, "# Undo\n\nOne.\n\nPlanner's two.\n")                 // 2
	ta.serverEdit(t, ch.ID, person, "# Undo\n\nOne, typed.\n\nPlanner's two.\n")           // 3
	ta.serverEdit(t, ch.ID, person, "# Undo\n\nOne, typed.\n\nPlanner's two.\n\nThree.\n") // 4

	var plan room.Plan
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/versions/2/revert", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &plan)
	if plan.Source != "# Undo\n\nOne, typed.\n\nThree.\n" || plan.Revision != 5 {
		t.Fatalf("after the revert %+v", plan)
	}
	if line := ta.lastChatLine(t, ch.ID); !strings.HasPrefix(line, "Ada reverted revision 2 (the Planner's change at ") {
		t.Errorf("chat line %q", line)
	}
	vs := ta.allVersions(t, ch.ID, 10)
	if vs[0].Version != 5 || vs[0].Author != (room.Author{Kind: "revert", Name: "ada"}) {
		t.Errorf("the revert is kept as %+v", vs[0])
	}

	// The revert reverted: the Planner's paragraph comes back.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/5/revert", nil), 200, "")
	if _, src := ta.source(t, ch.ID); src != "# Undo\n\nOne, typed.\n\nPlanner's two.\n\nThree.\n" {
		t.Fatalf("after reverting the revert %q", src)
	}

	// Version 1 wrote "One."; version 3 typed inside it, and a change by
	// the Planner edits it again: both are named.
	ta.serverEdit(t, ch.ID, planner, "# Undo\n\nOne, typed twice.\n\nPlanner's two.\n\nThree.\n") // 7
	r = ta.Do("POST", "/api/channels/"+ch.ID+"/versions/1/revert", nil)
	apptest.Want(t, r, 409, "revert-conflict")
	var rc revertConflict
	r.JSON(t, &rc)
	if rc.Message != "Revision 1 cannot be undone cleanly: later changes by Ada (revision 3) and the Planner (revision 7) edit the same text. Restore an earlier version instead, or edit by hand." {
		t.Errorf("message %q", rc.Message)
	}
	if len(rc.Conflicts) != 2 || rc.Conflicts[0].Version != 3 || rc.Conflicts[1].Version != 7 ||
		rc.Conflicts[1].Author != planner || rc.Conflicts[0].Time <= 0 {
		t.Fatalf("conflicts %+v", rc.Conflicts)
	}
	// Where they are in the current text: ", typed" and " twice".
	_, src := ta.source(t, ch.ID)
	u16 := func(s string) int { return room.UTF16Len(s) }
	at := strings.Index(src, ", typed")
	if c := rc.Conflicts[0]; c.From != u16(src[:at]) || c.To != u16(src[:at+len(", typed")]) {
		t.Errorf("revision 3 at %d–%d in %q", c.From, c.To, src)
	}
	at = strings.Index(src, " twice")
	if c := rc.Conflicts[1]; c.From != u16(src[:at]) || c.To != u16(src[:at+len(" twice")]) {
		t.Errorf("revision 7 at %d–%d", c.From, c.To)
	}
	if v, _ := ta.source(t, ch.ID); v != 7 {
		t.Errorf("a refused revert changed the plan: revision %d", v)
	}

	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/0/revert", nil), 404, "version-not-found")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/99/revert", nil), 404, "version-not-found")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/x/revert", nil), 400, "invalid-version")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/7/revert", nil), 409, "document-archived")
}

// TestRevertTurn: a Planner turn's changes undone together, even where the
// turn edits its own text, on top of a person's edit elsewhere; refused
// when a later change by someone else edits the turn's text; an unknown
// turn is not found.
func TestRevertTurn(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Turn")
	turn := room.Author{Kind: room.AuthorPlanner, Turn: "t-42", Model: "qwen"}
	person := room.Author{Kind: room.AuthorPerson, Name: "ada"}

	ta.serverEdit(t, ch.ID, person, "# Turn\n\nMine.\n")                                     // 1
	ta.serverEdit(t, ch.ID, turn, "# Turn\n\nMine.\n\n## Risks\n\nLate.\n")                  // 2
	ta.serverEdit(t, ch.ID, turn, "# Turn\n\nMine.\n\n## Risks\n\nLate, and over budget.\n") // 3: its own text
	ta.serverEdit(t, ch.ID, person, "# Turn\n\nMine, longer.\n\n## Risks\n\nLate, and over budget.\n")
	ta.serverEdit(t, ch.ID, turn, "# Turn\n\nMine, longer.\n\n## Risks\n\nLate, and over budget.\n\nDone.\n") // 5

	var plan room.Plan
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/turns/t-42/revert", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &plan)
	if plan.Source != "# Turn\n\nMine, longer.\n" {
		t.Fatalf("after the turn's revert %q", plan.Source)
	}
	if line := ta.lastChatLine(t, ch.ID); !strings.HasPrefix(line, "Ada reverted the Planner's turn of ") || !strings.HasSuffix(line, " (revisions 2–3 and 5).") {
		t.Errorf("chat line %q", line)
	}

	// Another turn, which a person then edits inside.
	other := room.Author{Kind: room.AuthorPlanner, Turn: "t-43"}
	ta.serverEdit(t, ch.ID, other, "# Turn\n\nMine, longer.\n\nNew.\n\nNewer.\n")          // 7
	ta.serverEdit(t, ch.ID, other, "# Turn\n\nMine, longer.\n\nNew.\n\nNewer.\n\nMore.\n") // 8
	ta.serverEdit(t, ch.ID, person, "# Turn\n\nMine, longer.\n\nNew.\n\nNewer, edited.\n\nMore.\n")
	r = ta.Do("POST", "/api/channels/"+ch.ID+"/turns/t-43/revert", nil)
	apptest.Want(t, r, 409, "revert-conflict")
	var rc revertConflict
	r.JSON(t, &rc)
	if !strings.HasPrefix(rc.Message, "The Planner's turn of ") || !strings.Contains(rc.Message, "(revisions 7–8) cannot be undone cleanly: a later change by Ada (revision 9) edits the same text.") ||
		len(rc.Conflicts) != 1 || rc.Conflicts[0].Version != 9 {
		t.Fatalf("refusal %+v", rc)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/turns/nope/revert", nil), 404, "turn-not-found")
}

// source is the plan's revision and text.
func (ta *testApp) source(t *testing.T, id string) (int64, string) {
	t.Helper()
	var plan room.Plan
	r := ta.Do("GET", "/api/channels/"+id+"/plan", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &plan)
	return plan.Revision, plan.Source
}

// TestRevertRebasesATab: a tab whose edit was made before a revert is told
// it is stale, catches up through the revert's update, rebases its edit
// over it as CodeMirror's collab does (Map), and pushes on top; the other
// tab receives both.
func TestRevertRebasesATab(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Two")
	ta.serverEdit(t, ch.ID, room.Author{Kind: room.AuthorPerson, Name: "ada"}, "# Two\n\nKeep.\n\nEnd.\n")
	v := ta.serverEdit(t, ch.ID, room.Author{Kind: room.AuthorPlanner, Turn: "t"}, "# Two\n\nKeep.\n\nThe Planner wrote this.\n\nEnd.\n")
	_, before := ta.source(t, ch.ID)

	watcher := ta.DialRoom(ch.ID)
	epoch := watcher.OpenPlan()["epoch"].(string)
	late := ta.DialRoom(ch.ID)
	late.OpenPlan()

	// The late tab types in the paragraph before the Planner's and at the
	// end, unsent, while the Planner's paragraph is reverted. (A revert
	// that replaced the whole text would move the first to an edge.)
	mine, keep := room.UTF16Len(before), len("# Two\n\n")
	local, err := room.ParseChangeSet(fmt.Appendf(nil, `[%d,[0,"Really "],%d,[0,"Typed.",""]]`, keep, mine-keep))
	if err != nil {
		t.Fatal(err)
	}
	apptest.Want(t, ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/revert", ch.ID, v), nil), 200, "")
	if u := watcher.Until("plan:updates"); u["version"] != float64(v) {
		t.Fatalf("the watcher got %v", u)
	}

	raw, _ := local.MarshalJSON()
	late.Send(map[string]any{"type": "plan:push", "id": "p1", "version": v,
		"updates": []any{map[string]any{"clientID": "tab-2", "changes": json.RawMessage(raw)}}})
	if e := late.Until("error"); e["code"] != "stale-version" || e["version"] != float64(v+1) {
		t.Fatalf("a push from before the revert: %v", e)
	}
	late.Send(map[string]any{"type": "plan:open", "id": "o2", "epoch": epoch, "version": v})
	missed := late.Until("plan:updates")["updates"].([]any)
	if len(missed) != 1 {
		t.Fatalf("catching up through the revert: %v", missed)
	}
	js, _ := json.Marshal(missed[0].(map[string]any)["changes"])
	theirs, err := room.ParseChangeSet(js)
	if err != nil {
		t.Fatal(err)
	}
	rebased, err := local.Map(theirs, false)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = rebased.MarshalJSON()
	if got := tabPush(t, late, v+1, raw); got != v+2 {
		t.Fatalf("the rebased push is version %d", got)
	}
	if _, src := ta.source(t, ch.ID); src != "# Two\n\nReally Keep.\n\nEnd.\nTyped.\n" {
		t.Fatalf("after the rebased push %q", src)
	}
	if u := watcher.Until("plan:updates"); u["version"] != float64(v+1) {
		t.Fatalf("the watcher got %v", u)
	}
}

// TestRevertKeepsThreadAnchors: a comment thread's passage keeps its place
// through a revert of a change before it, the revert's revert and a
// restore, as through any change; one on text a revert removes is
// orphaned.
func TestRevertKeepsThreadAnchors(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Anchors")
	person := room.Author{Kind: room.AuthorPerson, Name: "ada"}
	ta.serverEdit(t, ch.ID, person, "# Anchors\n\nWe ship the fast path first.\n")                                                                    // 1
	added := ta.serverEdit(t, ch.ID, room.Author{Kind: room.AuthorPlanner, Turn: "t"}, "# Anchors\n\nA new intro.\n\nWe ship the fast path first.\n") // 2
	rev, src := ta.source(t, ch.ID)
	tab := ta.DialRoom(ch.ID)
	tab.Send(newThreadFor(t, src, rev, "fast path", "Why first?"))
	tab.Until("comment:started")
	tab.Send(func() map[string]any {
		m := newThreadFor(t, src, rev, "new intro", "Needed?")
		m["id"] = "s2"
		return m
	}())
	tab.Until("comment:started")

	at := func(src, quote string) (int, int) {
		i := strings.Index(src, quote)
		return room.UTF16Len(src[:i]), room.UTF16Len(src[:i]) + room.UTF16Len(quote)
	}
	check := func(step string) {
		t.Helper()
		_, src := ta.source(t, ch.ID)
		for _, th := range ta.threads(t, ch.ID).Threads {
			p := th.Passage
			switch p.Quote {
			case "fast path":
				if from, to := at(src, "fast path"); p.From != from || p.To != to || p.State == room.AnchorOrphaned {
					t.Errorf("%s: the thread on %q is at %d–%d (%s), the text at %d–%d", step, p.Quote, p.From, p.To, p.State, from, to)
				}
			case "new intro": // on what the revert removed: orphaned, and it stays so
				if p.State != room.AnchorOrphaned {
					t.Errorf("%s: the thread on %q is %s in %q", step, p.Quote, p.State, src)
				}
			}
		}
	}
	apptest.Want(t, ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/revert", ch.ID, added), nil), 200, "")
	check("after the revert")
	apptest.Want(t, ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/revert", ch.ID, added+1), nil), 200, "")
	check("after reverting the revert")
	apptest.Want(t, ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/restore", ch.ID, added-1), nil), 200, "")
	check("after the restore")
	if _, src := ta.source(t, ch.ID); src != "# Anchors\n\nWe ship the fast path first.\n" {
		t.Errorf("restored %q", src)
	}
}

// TestRevertKeepsDecisionLine: a decision card's line in the plan stays
// where it is, after the paragraph it was asked on, through a revert of a
// change around it and a restore.
func TestRevertKeepsDecisionLine(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Decide")
	ta.putPlan(t, ch.ID, 0, "# Decide\n\nWhich store do we use?\n")
	browser := ta.DialRoom(ch.ID)
	askingPlanner(t, ta, ch.ID, "Which store?")
	ta.waitAttached(browser, ch.ID)
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin ask"})
	id := ta.openCard(t, ch.ID, "Which store?")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+id+"/answer",
		map[string]any{"labels": []string{"SQLite"}}), 200, "")
	_, src := ta.source(t, ch.ID)
	i := strings.Index(src, "<Decision")
	if i < 0 {
		t.Fatalf("no decision line in %q", src)
	}
	decision := src[i : i+strings.Index(src[i:], "\n")+1]
	placed := "Which store do we use?\n\n" + decision
	if !strings.Contains(src, placed) {
		t.Fatalf("the decision line is not after its paragraph: %q", src)
	}

	// A change before the line and one after it, by the Planner; the first
	// reverted, then the version with both restored.
	planner := room.Author{Kind: room.AuthorPlanner, Turn: "later"}
	before := ta.serverEdit(t, ch.ID, planner, strings.Replace(src, "Which store", "First, an intro.\n\nWhich store", 1))
	_, src = ta.source(t, ch.ID)
	both := ta.serverEdit(t, ch.ID, planner, src+"\nAfterwards.\n")
	apptest.Want(t, ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/revert", ch.ID, before), nil), 200, "")
	_, src = ta.source(t, ch.ID)
	if strings.Contains(src, "First, an intro.") || !strings.Contains(src, placed) || strings.Count(src, "<Decision") != 1 {
		t.Fatalf("after the revert %q", src)
	}
	apptest.Want(t, ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/restore", ch.ID, both), nil), 200, "")
	_, src = ta.source(t, ch.ID)
	if !strings.Contains(src, "First, an intro.\n\n"+placed) || strings.Count(src, "<Decision") != 1 {
		t.Fatalf("after the restore %q", src)
	}
}
