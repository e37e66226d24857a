package plannerhost_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// TestReplyKeepsItsBound: a turn that streams more text than a reply keeps
// and calls more tools than Work details lists still ends cleanly; the
// stored reply keeps the first MaxReplyBytes with a line where it was cut,
// lists MaxReplyToolRows calls and says how many more there were, and a tab
// that joins gets it in one frame of bounded size.
func TestReplyKeepsItsBound(t *testing.T) {
	// Each read_plan result is about 8 KB: 500 of them are over what a
	// reply keeps of its details.
	ta, ch, turn, browser := startTurn(t, "# Plan\n\n"+strings.Repeat("A line of the plan that says a little.\n\n", 200))
	const calls = room.MaxReplyToolRows + 40
	for i := range calls {
		if _, err := turn.CallTool(turn.ctx, "read_plan", map[string]any{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	chunk := strings.Repeat("abcdefgh", 32<<10) // 256 KiB
	for range 12 {
		if err := turn.Text(chunk); err != nil {
			t.Fatal(err)
		}
	}
	turn.done <- nil
	m := ta.finishedReply(ch.ID)
	if m.Status != room.ReplyDone {
		t.Fatalf("status %q", m.Status)
	}
	d := detailsOf(t, m)
	if len(d.Tools) != room.MaxReplyToolRows {
		t.Errorf("%d tool rows, want %d", len(d.Tools), room.MaxReplyToolRows)
	}
	if len(m.Text)+len(m.Details) > room.MaxReplyBytes+64<<10 {
		t.Errorf("stored reply: %d bytes of text and %d of details", len(m.Text), len(m.Details))
	}
	if !strings.Contains(m.Text, "Chopin kept no more of this reply's text: it reached 1 MiB") ||
		!strings.Contains(m.Text, "*40 more tool calls are not listed in Work details: one reply lists at most 500.*") ||
		!strings.Contains(m.Text, "Work details shows the inputs and results of the first") {
		t.Errorf("the reply does not say where it was cut: …%s", m.Text[max(0, len(m.Text)-400):])
	}
	_ = browser
	late := ta.OpenRoom(ch.ID)
	var raw []byte
	for {
		late.Conn.SetReadDeadline(time.Now().Add(apptest.Wait))
		_, frame, err := late.Conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(frame[:min(len(frame), 40)], []byte(`"chat:snapshot"`)) {
			raw = frame
			break
		}
	}
	if len(raw) > room.MaxChatFrameBytes {
		t.Errorf("chat:snapshot of %d bytes, over %d", len(raw), room.MaxChatFrameBytes)
	}
	var snap struct{ Messages []room.FrameMessage }
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatal(err)
	}
	last := snap.Messages[len(snap.Messages)-1]
	if last.ID != m.ID || !strings.HasPrefix(m.Text, last.Text) || last.Cut == nil || last.Cut.Text == nil || last.Cut.Text.Size != len(m.Text) {
		t.Errorf("a tab that joins sees a different reply, or all of it at once (%d bytes of text)", len(last.Text))
	}
}

// An ask whose agent vanished while it waited for an answer does not stay
// running in Work details: the reply ends with the call failed.
func TestVanishedAgentsAskEndsFailed(t *testing.T) {
	ta, ch, turn, browser, link := startTurnWith(t, "# Plan\n\nWe store data.\n")
	go turn.CallTool(turn.ctx, "ask", map[string]any{
		"questions": []any{map[string]any{"question": "Which store?", "header": "Store",
			"options": []any{map[string]any{"label": "SQLite", "description": "one file"}, map[string]any{"label": "Postgres", "description": "a server"}}}},
	})
	if card := browser.Until("decision:update")["decision"].(map[string]any); card["status"] != "open" {
		t.Fatalf("card %v", card)
	}
	link.Close() // the agent vanishes
	m := ta.finishedReply(ch.ID)
	var ask *room.ToolRow
	for _, row := range detailsOf(t, m).Tools {
		if row.Name == "ask" {
			ask = &row
		}
	}
	if ask == nil || ask.Status != "failed" || ask.Error == nil || ask.Error.Code != "call-unfinished" {
		t.Fatalf("the ask row after its agent vanished: %+v (reply %s)", ask, m.Status)
	}
}
