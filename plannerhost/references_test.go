package plannerhost_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// TestReadReference: a message that refers to another document lists it in
// the turn's prompt, the turn offers read_reference, which reads that
// document masked and says whether it changed since; it reads nothing the
// Chat does not refer to, and edit_plan still writes this document.
func TestReadReference(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	launch := ta.CreateDocument("octo/plans", "Launch plan")
	secret := "token ghp_16C7e42F292c6912E7710c838347Ae178B4a in use"
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+launch.ID+"/plan", map[string]any{"revision": 0,
		"source": "# Launch plan\n\nShip on Monday.\n\n" + secret + "\n"}), 200, "")
	other := ta.CreateDocument("octo/plans", "Unrelated")
	here := ta.CreateDocument("octo/plans", "Rollout")

	ts := newTurns()
	ta.attach(here.ID, ts.handler())
	apptest.Want(t, ta.Do("POST", "/api/channels/"+here.ID+"/messages", map[string]any{
		"text":       "@chopin compare with #Launch plan",
		"references": []any{map[string]any{"kind": "document", "channelId": launch.ID}},
	}), 201, "")
	turn := ts.next(t)
	defer close(turn.done)

	want := "\n\nThe message refers to other documents; read one with read_reference {\"id\": ...}:\n- “Launch plan” (id " + launch.ID + "), at revision 1 when referenced"
	if !strings.HasSuffix(turn.Prompt(), want) {
		t.Errorf("the prompt does not end with the references:\n%s", turn.Prompt())
	}
	offered := false
	for _, tool := range turn.Message.Tools {
		offered = offered || tool.Name == room.ToolReadReference
	}
	if !offered {
		t.Fatalf("the turn does not offer read_reference: %v", turn.Message.Tools)
	}

	var page string
	json.Unmarshal(turn.call(t, room.ToolReadReference, map[string]any{"id": launch.ID}), &page)
	if !strings.HasPrefix(page, "reference: referenced as “Launch plan” at revision 1; unchanged since.\n") ||
		!strings.Contains(page, "Ship on Monday.") || !strings.Contains(page, "token [redacted] in use") || strings.Contains(page, "ghp_") {
		t.Errorf("read_reference:\n%s", page)
	}

	// The referenced document changes: the next read says so.
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+launch.ID+"/plan", map[string]any{"revision": 1,
		"source": "# Launch plan\n\nShip on Tuesday.\n"}), 200, "")
	json.Unmarshal(turn.call(t, room.ToolReadReference, map[string]any{"id": launch.ID, "offset": 3}), &page)
	if !strings.HasPrefix(page, "reference: referenced as “Launch plan” at revision 1; changed since: it is now at revision 2.\n") ||
		!strings.Contains(page, "Ship on Tuesday.") {
		t.Errorf("read_reference after a change:\n%s", page)
	}

	// A document the Chat does not refer to is not read, even when another
	// document's Chat refers to it.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+launch.ID+"/messages", map[string]any{
		"text": "see #Unrelated", "references": []any{map[string]any{"kind": "document", "channelId": other.ID}},
	}), 201, "")
	if msg := turn.callError(t, room.ToolReadReference, `{"id":"`+other.ID+`"}`); !strings.Contains(msg, "No message of this document's Chat refers to a document with the id "+other.ID) {
		t.Errorf("an unreferenced document: %s", msg)
	}
	if msg := turn.callError(t, room.ToolReadReference, `{"document":"`+launch.ID+`"}`); !strings.Contains(msg, "read_reference takes {id, offset?, limit?, column?}") {
		t.Errorf("a misnamed argument: %s", msg)
	}

	// edit_plan writes this document, whatever was read last.
	turn.call(t, room.ToolEditPlan, map[string]any{"revision": 0, "operations": []any{map[string]any{"op": "insert_root", "content": "Rollout notes."}}})
	var plan struct{ Source string }
	ta.Do("GET", "/api/channels/"+here.ID+"/plan", nil).JSON(t, &plan)
	var theirs struct{ Source string }
	ta.Do("GET", "/api/channels/"+launch.ID+"/plan", nil).JSON(t, &theirs)
	if !strings.Contains(plan.Source, "Rollout notes.") || strings.Contains(theirs.Source, "Rollout notes.") {
		t.Errorf("edit_plan wrote the wrong document: here %q, referenced %q", plan.Source, theirs.Source)
	}
}

// TestNoReferencesNoTool: a document whose Chat refers to nothing is not
// offered read_reference.
func TestNoReferencesNoTool(t *testing.T) {
	_, _, turn, _ := startTurn(t, "# Plan\n\nText.\n")
	defer close(turn.done)
	for _, tool := range turn.Message.Tools {
		if tool.Name == room.ToolReadReference {
			t.Fatal("read_reference offered with no reference in Chat")
		}
	}
	if strings.Contains(turn.Prompt(), "read_reference") {
		t.Errorf("the prompt names references: %s", turn.Prompt())
	}
}
