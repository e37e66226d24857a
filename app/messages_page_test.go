package app

// Chat in pages through the real app: older messages over HTTP by cursor
// back to the first, and a long message cut in every frame a browser
// receives, its text read page by page (docs/http-api.md,
// docs/room-protocol.md "Long messages").

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

func TestMessagesBeforeCursor(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Paged")
	const n = 205 // more than a chat:snapshot holds
	for i := 1; i <= n; i++ {
		apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": fmt.Sprintf("message %d", i)}), 201, "")
	}
	type page struct {
		Messages []room.Message
		Before   *string
	}
	var got []string
	path := "/api/channels/" + ch.ID + "/messages?limit=100"
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than 3 pages of %d messages by 100", n)
		}
		var p page
		r := ta.Do("GET", path, nil)
		apptest.Want(t, r, 200, "")
		r.JSON(t, &p)
		var texts []string
		for _, m := range p.Messages {
			texts = append(texts, m.Text)
		}
		got = append(texts, got...)
		if p.Before == nil {
			if !strings.Contains(string(r.Body), `"before":null`) {
				t.Errorf("the last page says %s, want before null", r.Body)
			}
			break
		}
		path = "/api/channels/" + ch.ID + "/messages?limit=100&before=" + url.QueryEscape(*p.Before)
	}
	if len(got) != n {
		t.Fatalf("read %d messages, want %d: %q", len(got), n, got)
	}
	for i, text := range got {
		if text != fmt.Sprintf("message %d", i+1) {
			t.Fatalf("message %d is %q", i+1, text)
		}
	}
	// A joining tab gets the newest 200 and the cursor of the 5 before them.
	var snap struct {
		Messages []room.FrameMessage
		Before   *string
	}
	readFrame(t, ta.OpenRoom(ch.ID), "chat:snapshot", &snap)
	if len(snap.Messages) != 200 || snap.Messages[0].Text != "message 6" || snap.Before == nil {
		t.Fatalf("snapshot of %d messages, cursor %v", len(snap.Messages), snap.Before)
	}
	var older struct {
		Messages []room.Message
		Before   *string
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages?before="+url.QueryEscape(*snap.Before), nil).JSON(t, &older)
	if len(older.Messages) != 5 || older.Messages[4].Text != "message 5" || older.Before != nil {
		t.Errorf("before the snapshot: %d messages, cursor %v", len(older.Messages), older.Before)
	}
	for _, bad := range []string{"%25%25%25", "abc", "", "YmVmb3JlOi0x", "YmVmb3JlOjAx"} {
		apptest.Want(t, ta.Do("GET", "/api/channels/"+ch.ID+"/messages?before="+bad, nil), 400, "invalid-cursor")
	}
}

// TestLongMessageInPages: a 60 KiB message (its text over a page, in
// two-byte characters so a page could end inside one) reaches a tab cut to
// its first page, in chat:message and chat:snapshot alike, and its text
// comes back whole page by page.
func TestLongMessageInPages(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Long")
	early := ta.DialRoom(ch.ID)
	text := "# Notes\n" + strings.Repeat("é", 30_000) + "\nthe end"
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": text}), 201, "")

	check := func(what string, raw []byte, m room.FrameMessage) {
		t.Helper()
		if len(raw) > room.MaxChatFrameBytes {
			t.Errorf("%s: frame of %d bytes, over %d", what, len(raw), room.MaxChatFrameBytes)
		}
		if m.Cut == nil || m.Cut.Text == nil || m.Cut.Text.Size != len(text) || m.Cut.Text.Next != len(m.Text) {
			t.Fatalf("%s: cut %+v for a text of %d bytes, %d sent", what, m.Cut, len(text), len(m.Text))
		}
		if len(m.Text) > room.MessagePageBytes || !strings.HasPrefix(text, m.Text) || len(m.Text) < room.MessagePageBytes-1 {
			t.Errorf("%s: sent %d bytes of the text, want its first page", what, len(m.Text))
		}
	}
	var live struct {
		Type    string
		Message room.FrameMessage
	}
	raw := readFrame(t, early, "chat:message", &live)
	check("chat:message", raw, live.Message)

	var snap struct {
		Type     string
		Messages []room.FrameMessage
	}
	raw = readFrame(t, ta.OpenRoom(ch.ID), "chat:snapshot", &snap)
	if len(snap.Messages) != 1 {
		t.Fatalf("snapshot of %d messages", len(snap.Messages))
	}
	check("chat:snapshot", raw, snap.Messages[0])

	var whole strings.Builder
	whole.WriteString(snap.Messages[0].Text)
	pages := 0
	for next := snap.Messages[0].Cut.Text.Next; ; pages++ {
		var p room.TextPage
		r := ta.Do("GET", fmt.Sprintf("/api/channels/%s/messages/%s/text?from=%d", ch.ID, live.Message.ID, next), nil)
		apptest.Want(t, r, 200, "")
		r.JSON(t, &p)
		if p.From != next || p.Size != len(text) || len(p.Text) > room.MessageTextPageBytes {
			t.Fatalf("page from %d: from %d, size %d, %d bytes", next, p.From, p.Size, len(p.Text))
		}
		whole.WriteString(p.Text)
		if p.Next == nil {
			break
		}
		next = *p.Next
	}
	if whole.String() != text {
		t.Errorf("the pages make %d bytes, not the message's %d", whole.Len(), len(text))
	}
	// The message whole, over HTTP.
	var whole1 room.Message
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages/"+live.Message.ID, nil).JSON(t, &whole1)
	if whole1.Text != text {
		t.Errorf("GET the message: %d bytes of text, want %d", len(whole1.Text), len(text))
	}
	// The list route sends the message cut too.
	var list struct{ Messages []room.FrameMessage }
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	if len(list.Messages) != 1 || list.Messages[0].Cut == nil {
		t.Errorf("list %+v", list.Messages)
	}
	base := fmt.Sprintf("/api/channels/%s/messages/%s/text", ch.ID, live.Message.ID)
	apptest.Want(t, ta.Do("GET", base+"?from=9", nil), 400, "invalid-offset") // inside "é"
	apptest.Want(t, ta.Do("GET", base+"?from=-1", nil), 400, "invalid-offset")
	apptest.Want(t, ta.Do("GET", base+fmt.Sprintf("?from=%d", len(text)+1), nil), 400, "invalid-offset")
	apptest.Want(t, ta.Do("GET", base+"?field=title", nil), 400, "invalid-argument")
	apptest.Want(t, ta.Do("GET", "/api/channels/"+ch.ID+"/messages/nope/text", nil), 404, "message-not-found")
}

// readFrame reads the socket's frames until one of the type, decodes it
// into v and returns its bytes.
func readFrame(t *testing.T, rc *apptest.Room, typ string, v any) []byte {
	t.Helper()
	for {
		rc.Conn.SetReadDeadline(time.Now().Add(apptest.Wait))
		_, raw, err := rc.Conn.ReadMessage()
		if err != nil {
			t.Fatalf("read %s: %v", typ, err)
		}
		var head struct{ Type string }
		if json.Unmarshal(raw, &head) == nil && head.Type == typ {
			if err := json.Unmarshal(raw, v); err != nil {
				t.Fatal(err)
			}
			return raw
		}
	}
}
