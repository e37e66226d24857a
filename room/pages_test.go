package room

// The bound on a Chat frame, for the largest message a reply or a person
// can make (pages.go).

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestForFrameBoundsTheLargestMessages(t *testing.T) {
	big := json.RawMessage(`"` + strings.Repeat("x", maxToolRowJSON) + `"`)
	rows := make([]ToolRow, MaxReplyToolRows)
	for i := range rows {
		rows[i] = ToolRow{ID: strings.Repeat("i", 64), Name: "read_plan", Host: true, Status: "failed", Input: big, Result: big,
			Error: &ToolRowError{Code: "x", Message: strings.Repeat("m", 4000)}}
	}
	reply := Message{ID: "r", Role: RolePlanner, Status: ReplyDone, Text: strings.Repeat("ü", MaxReplyText/4),
		Details: encode(ReplyDetails{Reasoning: strings.Repeat("r", MaxReplyText/2), Tools: rows})}
	files := Message{ID: "p", Role: RolePerson, Text: strings.Repeat("t", MaxMessageText),
		Details: json.RawMessage(`{"attachments": [{"name": "a.bin", "kind": "file", "data": "` + strings.Repeat("QUFB", (1<<20)/3) + `"}]}`)}
	for _, m := range []Message{reply, files} {
		f := ForFrame(m)
		frame := encode(msgChatMessage{Type: "chat:message", Message: f})
		if len(frame) > MaxChatFrameBytes {
			t.Errorf("message %s: frame of %d bytes, over %d", m.ID, len(frame), MaxChatFrameBytes)
		}
		if f.Cut == nil || f.Cut.Text == nil || f.Cut.Text.Size != len(m.Text) || len(f.Text) > MessagePageBytes {
			t.Errorf("message %s: cut %+v, %d bytes of text", m.ID, f.Cut, len(f.Text))
		}
		snap := encode(msgChatSnapshot{Type: "chat:snapshot", Messages: newestWithin(ForFrames([]Message{files, reply, files, reply}), maxChatSnapshotBytes)})
		if len(snap) > MaxChatFrameBytes {
			t.Errorf("snapshot of %d bytes", len(snap))
		}
	}
	f := ForFrame(reply)
	var d ReplyDetails
	json.Unmarshal(f.Details, &d)
	if !f.Cut.Tools || f.Cut.Reasoning == nil || len(d.Reasoning) != f.Cut.Reasoning.Next || len(d.Tools) != MaxReplyToolRows || d.Tools[0].Input != nil {
		t.Errorf("reply details cut %+v: %d rows, %d bytes of reasoning", f.Cut, len(d.Tools), len(d.Reasoning))
	}
	p, ok := ReadTextPage(reply, "text", f.Cut.Text.Next, MessageTextPageBytes)
	if !ok || !strings.HasPrefix(reply.Text[f.Cut.Text.Next:], p.Text) || p.Next == nil {
		t.Errorf("second page %v %+v", ok, p.Next)
	}
	if _, ok := ReadTextPage(reply, "text", 1, MessageTextPageBytes); ok {
		t.Errorf("a page from inside a character was read")
	}
	if small := ForFrame(Message{ID: "s", Text: "hello"}); small.Cut != nil {
		t.Errorf("a short message was cut: %+v", small.Cut)
	}
}
