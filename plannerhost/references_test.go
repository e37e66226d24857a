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

// TestReadReferencePassage: a message that refers to a passage of another
// document lists it in the turn's prompt with its lines, heading and
// quote; read_reference shows first the passage's text as it reads now,
// found where it moved to, then the page; and says when it was deleted.
func TestReadReferencePassage(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	launch := ta.CreateDocument("octo/plans", "Launch plan")
	source := "# Launch plan\n\n## Goals\n\nShip the beta to ten teams.\nThen ask them.\n\n## Risks\n\nThe API may change.\n"
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+launch.ID+"/plan", map[string]any{"revision": 0, "source": source}), 200, "")
	here := ta.CreateDocument("octo/plans", "Rollout")

	ts := newTurns()
	ta.attach(here.ID, ts.handler())
	from := strings.Index(source, "Ship")
	to := strings.Index(source, "\n\n## Risks")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+here.ID+"/messages", map[string]any{
		"text":       "@chopin is this still the goal?",
		"references": []any{map[string]any{"kind": "passage", "channelId": launch.ID, "from": from, "to": to}},
	}), 201, "")
	turn := ts.next(t)
	defer close(turn.done)

	want := "\n\nThe message refers to other documents; read one with read_reference {\"id\": ...}:\n" +
		"- a passage: lines 5–6 of “Launch plan” (id " + launch.ID + "), under “Goals”, at revision 1 when referenced: “Ship the beta to ten teams. Then ask them.”"
	if !strings.HasSuffix(turn.Prompt(), want) {
		t.Errorf("the prompt does not end with the passage:\n%s", turn.Prompt())
	}

	// Moved down by an edit above it and changed inside: read_reference
	// shows it where it is, as it reads now, before the page.
	edited := strings.Replace(strings.Replace(source, "## Goals\n", "Owner: Ana.\n\n## Goals\n", 1), "ten teams", "twelve teams", 1)
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+launch.ID+"/plan", map[string]any{"revision": 1, "source": edited}), 200, "")
	var page string
	json.Unmarshal(turn.call(t, room.ToolReadReference, map[string]any{"id": launch.ID}), &page)
	wantStart := "reference: referenced as “Launch plan” at revision 1; changed since: it is now at revision 2.\n" +
		"passage: lines 7–8, under “Goals” (lines 5–6 at revision 1; its text changed since):\n" +
		"Ship the beta to twelve teams.\nThen ask them.\n\n"
	if !strings.HasPrefix(page, wantStart) || !strings.Contains(page, "Owner: Ana.") {
		t.Errorf("read_reference:\n%s\nwant it to start with:\n%s", page, wantStart)
	}
	// A later page is the page alone.
	json.Unmarshal(turn.call(t, room.ToolReadReference, map[string]any{"id": launch.ID, "offset": 9}), &page)
	if strings.Contains(page, "passage:") {
		t.Errorf("a later page repeats the passage:\n%s", page)
	}

	// Deleted, it says so.
	deleted := strings.Replace(edited, "Ship the beta to twelve teams.\nThen ask them.\n\n", "", 1)
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+launch.ID+"/plan", map[string]any{"revision": 2, "source": deleted}), 200, "")
	json.Unmarshal(turn.call(t, room.ToolReadReference, map[string]any{"id": launch.ID}), &page)
	if want := "passage: “Ship the beta to ten teams. Then ask them.” (lines 5–6 at revision 1) was deleted or rewritten since; it is not in the document now.\n"; !strings.Contains(page, want) {
		t.Errorf("read_reference of a deleted passage:\n%s", page)
	}
}
