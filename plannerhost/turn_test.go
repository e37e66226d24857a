package plannerhost_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
)

// The agent connection's contract against the real app: a Planner written
// from the spec alone (agentconn/client) over a real socket, a browser on
// the room socket, and HTTP.

// TestAgentTurnEndToEnd: a person's @chopin message becomes a turn, the
// Planner reads and edits the plan and streams its reply, and every open
// tab sees the edit and the reply as they happen.
func TestAgentTurnEndToEnd(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	ts := newTurns()
	link := ta.attach(ch.ID, ts.handler())
	if got := link.Attached().Document; got.ID != ch.ID || got.Title != "Launch" || got.Repository != "octo/plans" ||
		got.URL != ta.app.URL()+"/documents/octo/plans/launch" {
		t.Errorf("attached %+v", got)
	}
	if st := browser.Until("planner:status")["planner"].(map[string]any); st["state"] != "attached" || st["login"] != "ada" {
		t.Errorf("planner:status %v", st)
	}

	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "Morning"}), 201, "")
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin add a rollout section"})
	turn := ts.next(t)
	m := turn.Message
	if m.Prompt != "Said in the room since your last reply:\n@ada: Morning\n\n@ada: @chopin add a rollout section" {
		t.Errorf("prompt %q", m.Prompt)
	}
	if !strings.HasPrefix(m.Instructions, plannerhost.SystemPrompt) ||
		!strings.Contains(m.Instructions, "This document: Launch ("+ta.app.URL()+"/documents/octo/plans/launch), in the repository octo/plans.") {
		t.Errorf("instructions %q", m.Instructions)
	}
	var names []string
	for _, tool := range m.Tools {
		names = append(names, tool.Name)
		var schema map[string]any
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema["type"] != "object" || tool.Description == "" {
			t.Errorf("tool %s: schema %s", tool.Name, tool.InputSchema)
		}
	}
	if !slices.Equal(names, []string{"read_plan", "edit_plan", "ask", "open_decisions", "list_versions", "read_version"}) {
		t.Errorf("tools %v", names)
	}
	// The reply opens as the turn starts, before the sender's "ok".
	var started map[string]any
	for started == nil || started["role"] != "planner" {
		started = browser.Until("chat:message")["message"].(map[string]any)
	}
	browser.Until("ok")
	if started["status"] != "streaming" || started["author"] != "ada" || started["text"] != "" {
		t.Errorf("reply started as %v", started)
	}

	var page string
	json.Unmarshal(turn.call(t, "read_plan", map[string]any{}), &page)
	if !strings.HasPrefix(page, "document: Launch\nurl: "+ta.app.URL()+"/documents/octo/plans/launch\nrevision: 0\n") ||
		!strings.HasSuffix(page, "text:\n# Launch\n") {
		t.Errorf("read_plan %q", page)
	}
	var edited room.EditResult
	json.Unmarshal(turn.call(t, "edit_plan", map[string]any{"revision": 0, "operations": []any{
		map[string]any{"op": "insert_root", "content": "## Rollout\n\nA small pilot first."}}}), &edited)
	if edited.Revision != 1 || len(edited.Blocks) != 3 || edited.Blocks[1].Type != "heading" {
		t.Errorf("edit_plan %+v", edited)
	}
	upd := browser.Until("plan:updates")
	if upd["version"] != 0.0 || upd["updates"].([]any)[0].(map[string]any)["clientID"] != "planner" {
		t.Errorf("plan:updates %v", upd)
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Launch\n\n## Rollout\n\nA small pilot first.\n" || plan.Revision != 1 {
		t.Errorf("plan %+v", plan)
	}

	turn.Reasoning("The plan needs a rollout.")
	for _, part := range []wire.StreamPart{{Type: "text-start", ID: "x"}, {Type: "text-delta", ID: "x", Delta: "Added "},
		{Type: "text-delta", ID: "x", Delta: "a rollout 👋."}, {Type: "text-end", ID: "x"}} {
		if err := turn.Send(part); err != nil {
			t.Fatal(err)
		}
	}
	var text string
	for text != "Added a rollout 👋." {
		d := browser.Next()
		if d["type"] != "chat:delta" {
			continue
		}
		if d["message"] != started["id"] {
			t.Fatalf("delta of another message: %v", d)
		}
		if d["field"] == "text" {
			if int(d["at"].(float64)) != len([]rune(text)) {
				t.Errorf("delta at %v after %q", d["at"], text)
			}
			text += d["delta"].(string)
		}
	}
	// A tab that opens now sees the reply as it is, not as last saved.
	snapshot := ta.chatSnapshot(ch.ID)
	if m := snapshot[len(snapshot)-1]; m["id"] != started["id"] || m["text"] != "Added a rollout 👋." || m["status"] != "streaming" {
		t.Errorf("a late tab sees %v", m)
	}
	turn.done <- nil
	final := browser.Until("chat:message")["message"].(map[string]any)
	if final["id"] != started["id"] || final["status"] != "done" || final["text"] != "Added a rollout 👋." {
		t.Errorf("reply ended as %v", final)
	}

	var list struct{ Messages []room.Message }
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	last := list.Messages[len(list.Messages)-1]
	var details room.ReplyDetails
	json.Unmarshal(last.Details, &details)
	if last.Role != "planner" || last.Text != "Added a rollout 👋." || last.Status != "done" || details.Reasoning != "The plan needs a rollout." ||
		len(details.Tools) != 2 || details.Tools[0].Name != "read_plan" || details.Tools[0].Status != "done" || !details.Tools[0].Host ||
		details.Tools[1].Name != "edit_plan" || string(details.Tools[1].Input) == "" {
		t.Errorf("stored reply %+v %+v", last, details)
	}

	// The next turn's prompt starts after this reply; the instructions carry
	// the conversation up to it.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin thanks"}), 201, "")
	turn = ts.next(t)
	if turn.Message.Prompt != "@ada: @chopin thanks" ||
		!strings.HasSuffix(turn.Message.Instructions, "The conversation so far:\n@ada: Morning\n@ada: @chopin add a rollout section\n@chopin (you): Added a rollout 👋.") {
		t.Errorf("second turn %q\n%q", turn.Message.Prompt, turn.Message.Instructions)
	}
	turn.done <- nil
}
