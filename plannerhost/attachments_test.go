package plannerhost_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
)

func attachmentPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// The files a person sends with a message reach the turn as the spec says:
// in order, decided by their bytes; images only for a model that reads them;
// written into the prompt for a client without the feature.
func TestAgentAttachmentsEndToEnd(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	pic := attachmentPNG(t)
	files := []map[string]string{
		{"name": "C:\\Users\\ana\\photo\x07.png", "data": b64(pic)},
		{"name": "notes.md", "data": b64([]byte("hello\n"))},
		{"name": "logo.svg", "data": b64([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))},
	}
	say := func(doc, text string, files any) apptest.Response {
		return ta.Do("POST", "/api/channels/"+doc+"/messages", map[string]any{"text": text, "attachments": files})
	}

	ts := newTurns()
	link := ta.attachWith(ch.ID, []string{"attachments", "capability-catalog"}, ts.handler())
	if !link.Has("attachments") {
		t.Fatalf("features %v", link.Attached().Features)
	}
	if err := link.ReportCapabilities(json.RawMessage(`{"models":{"available":[{"id":"seer","name":"Seer","inputTypes":["text","image"]},{"id":"blind","name":"Blind"}],"default":{"id":"seer"}}}`)); err != nil {
		t.Fatal(err)
	}
	browser := ta.DialRoom(ch.ID)
	modelUntil(browser, func(m map[string]any) bool { return m["offered"] == true })

	r := say(ch.ID, "@chopin look", files)
	apptest.Want(t, r, 201, "")
	var sent map[string]any
	r.JSON(t, &sent)
	kept := sent["details"].(map[string]any)["attachments"].([]any)
	if len(kept) != 3 || kept[0].(map[string]any)["name"] != "photo.png" || kept[2].(map[string]any)["mediaType"] != "text/plain" {
		t.Fatalf("kept %v", kept)
	}
	turn := ts.next(t)
	got := turn.Message.Attachments
	if turn.Message.Prompt != "@ada: @chopin look" || len(got) != 3 ||
		got[0].Kind != "image" || got[0].MediaType != "image/png" || got[0].Name != "photo.png" || got[0].Size != len(pic) || got[0].Data != b64(pic) ||
		got[1].Kind != "file" || got[1].MediaType != "text/plain" || got[1].Name != "notes.md" || got[1].Data != b64([]byte("hello\n")) ||
		got[2].Kind != "file" || got[2].MediaType != "text/plain" || got[0].ID == "" || got[0].ID == got[1].ID {
		t.Fatalf("turn prompt %q attachments %+v", turn.Message.Prompt, got)
	}
	turn.done <- nil
	waitIdle(t, ta, ch.ID)

	// A model that does not read images gets the text files, and words for the image.
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/planner/model", map[string]string{"model": "blind"}), 200, "")
	apptest.Want(t, say(ch.ID, "@chopin again", files[:2]), 201, "")
	turn = ts.next(t)
	if len(turn.Message.Attachments) != 1 || turn.Message.Attachments[0].Name != "notes.md" ||
		turn.Message.Prompt != "@ada: @chopin again\n\n(@ada sent the image photo.png with this message. It could not be given to you, so you cannot see it; say so if it matters.)" {
		t.Fatalf("blind turn %q %+v", turn.Message.Prompt, turn.Message.Attachments)
	}
	turn.done <- nil
	waitIdle(t, ta, ch.ID)

	// The socket takes files too.
	browser.Send(map[string]any{"type": "chat:send", "id": "f1", "text": "@chopin by socket", "attachments": files[1:2]})
	turn = ts.next(t)
	if len(turn.Message.Attachments) != 1 || turn.Message.Attachments[0].Name != "notes.md" {
		t.Fatalf("socket turn %+v", turn.Message.Attachments)
	}
	browser.Until("ok")
	turn.done <- nil
	waitIdle(t, ta, ch.ID)

	// Refused: a binary file, bad base64, too many files.
	apptest.Want(t, say(ch.ID, "@chopin x", []map[string]string{{"name": "a.bin", "data": b64([]byte{0, 1, 2})}}), 400, "invalid-attachment")
	apptest.Want(t, say(ch.ID, "@chopin x", []map[string]string{{"name": "a.txt", "data": "!!"}}), 400, "invalid-attachment")
	many := make([]map[string]string, 21)
	for i := range many {
		many[i] = files[1]
	}
	apptest.Want(t, say(ch.ID, "@chopin x", many), 400, "invalid-attachment")

	// A client without the feature reads the text files in the prompt.
	other := ta.CreateDocument("octo/plans", "Other")
	ts2 := newTurns()
	ta.attachWith(other.ID, nil, ts2.handler())
	apptest.Want(t, say(other.ID, "@chopin look", files[:2]), 201, "")
	turn = ts2.next(t)
	if len(turn.Message.Attachments) != 0 || turn.Message.Prompt != "@ada: @chopin look\n\n"+
		"(@ada sent the image photo.png with this message. It could not be given to you, so you cannot see it; say so if it matters.)\n\n"+
		"<file name=\"notes.md\">\nhello\n</file>" {
		t.Fatalf("prompt without the feature %q", turn.Message.Prompt)
	}
	turn.done <- nil
}

// The operator's caps bound a message's files.
func TestAgentAttachmentLimits(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.ChatAttachmentMaxBytes, cfg.ChatAttachmentMaxTotal = 8, 12
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	say := func(files ...string) apptest.Response {
		var fs []map[string]string
		for _, f := range files {
			fs = append(fs, map[string]string{"name": "f.txt", "data": b64([]byte(f))})
		}
		return ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]any{"text": "hi", "attachments": fs})
	}
	apptest.Want(t, say("12345678"), 201, "")
	apptest.Want(t, say("123456789"), 413, "message-too-large")
	apptest.Want(t, say("12345678", "12345"), 413, "message-too-large")
	if r := say("1234", "12345678"); r.Status != 201 || !strings.Contains(string(r.Body), `"attachments"`) {
		t.Fatalf("two files within the caps: %d %s", r.Status, r.Body)
	}
}
