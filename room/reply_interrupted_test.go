package room

import (
	"context"
	"encoding/json"
	"testing"
)

func TestInterruptedReplyFailsOnLoad(t *testing.T) {
	p := newMemPersister()
	ctx := context.Background()
	ch := Channel{ID: "c1", Title: "Doc"}
	p.SaveMessage(ctx, Message{ID: "m1", ChannelID: "c1", Seq: 1, Role: RolePerson, Text: "@chopin go"})
	p.SaveMessage(ctx, Message{ID: "m2", ChannelID: "c1", Seq: 2, Role: RolePlanner, Text: "Half a", Status: ReplyStreaming,
		Details: json.RawMessage(`{"reasoning":"thinking"}`)})
	h := NewHub(Options{Persister: p})
	r, release, err := h.Acquire(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ms, _ := r.Messages(ctx, 10)
	if len(ms) != 2 || ms[1].Status != ReplyFailed || ms[1].Text != "Half a" {
		t.Fatalf("after load: %+v", ms)
	}
	var d ReplyDetails
	json.Unmarshal(ms[1].Details, &d)
	if d.Error != interruptedReply || d.Reasoning != "thinking" {
		t.Errorf("details %+v", d)
	}
	if m, _ := r.Say(ctx, Identity{Login: "ada", CanEdit: true}, "next"); m.Seq != 3 {
		t.Errorf("next message seq %d", m.Seq)
	}
}
