package app

import (
	"context"
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
	if line := ta.lastChatLine(t, ch.ID); !strings.HasPrefix(line, "Ada reverted the Planner's turn of ") || !strings.HasSuffix(line, " (revisions 2, 3 and 5).") {
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
