package plannerhost_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// testPNG is a w×h PNG.
func testPNG(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ownTool reports a call of the turn's own tool name with result.
func (tt *testTurn) ownTool(t testing.TB, id, name, input string, result any, isError bool) {
	t.Helper()
	raw, err := json.Marshal(result)
	if err != nil {
		t.Fatal(err)
	}
	if err := tt.Send(wire.StreamPart{Type: wire.PartToolCall, ToolCallID: id, ToolName: name, Input: input, ProviderExecuted: true}); err != nil {
		t.Fatal(err)
	}
	if err := tt.Send(wire.StreamPart{Type: wire.PartToolResult, ToolCallID: id, ToolName: name, Result: raw, IsError: isError}); err != nil {
		t.Fatal(err)
	}
}

type replyDetails struct {
	Tools         []room.ToolRow      `json:"tools"`
	Images        []room.ReplyImage   `json:"images"`
	RefusedImages []room.RefusedImage `json:"refusedImages"`
}

func detailsOf(t testing.TB, m room.Message) replyDetails {
	t.Helper()
	var d replyDetails
	if err := json.Unmarshal(m.Details, &d); err != nil {
		t.Fatalf("details %s: %v", m.Details, err)
	}
	return d
}

// TestAgentToolImages: the image blocks of an own tool's final successful
// result are stored as the document's own images and shown on the turn's
// message in the order they were made, with refusedImages for the blocks
// Chat will not host; a failed result shows none, and the tool row keeps
// the text and how many images, never the bytes.
func TestAgentToolImages(t *testing.T) {
	ta, ch, turn, browser := startTurn(t, "")
	red := base64.StdEncoding.EncodeToString(testPNG(t, 3, 2, color.RGBA{255, 0, 0, 255}))
	blue := base64.RawStdEncoding.EncodeToString(testPNG(t, 4, 4, color.RGBA{0, 0, 255, 255}))
	if err := turn.DeclareTools("draw"); err != nil {
		t.Fatal(err)
	}
	turn.ownTool(t, "c1", "draw", `{"prompt":"red"}`, map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "Here it is"},
		map[string]any{"type": "image", "data": "PHN2Zy8+", "mimeType": "image/svg+xml"},
		map[string]any{"type": "image", "data": red, "mimeType": "image/png", "alt": "A red box", "caption": ""},
		map[string]any{"type": "image", "data": "", "mimeType": "image/png", "tooLarge": 3000000},
		map[string]any{"type": "image", "data": "!!!", "mimeType": "image/png"},
	}}, false)
	// A failed result shows no images.
	turn.ownTool(t, "c2", "draw", `{}`, map[string]any{"content": []any{
		map[string]any{"type": "image", "data": blue, "mimeType": "image/png"}}}, true)
	// The JSON text of the result is read the same way.
	text, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "image", "data": blue, "mimeType": "image/png"}}})
	turn.ownTool(t, "c3", "draw", `{}`, string(text), false)
	if ev := browser.Until("chat:images"); ev["images"] == nil {
		t.Errorf("chat:images %v", ev)
	}
	turn.done <- nil

	m := ta.finishedReply(ch.ID)
	d := detailsOf(t, m)
	if len(d.Images) != 2 || d.Images[0].Alt == nil || *d.Images[0].Alt != "A red box" || d.Images[0].Caption == nil ||
		d.Images[0].Width != 3 || d.Images[0].Height != 2 || d.Images[1].Alt != nil || d.Images[1].Width != 4 {
		t.Fatalf("images %+v", d.Images)
	}
	if len(d.RefusedImages) != 3 {
		t.Fatalf("refusedImages %+v", d.RefusedImages)
	}
	for i, want := range []struct {
		before int
		says   string
	}{{0, "image/svg+xml"}, {1, "did not fit"}, {1, "not base64"}} {
		r := d.RefusedImages[i]
		if r.Before != want.before || !strings.HasPrefix(r.Reason, "Image couldn't be shown: ") || !strings.Contains(r.Reason, want.says) {
			t.Errorf("refusedImages[%d] = %+v", i, r)
		}
	}
	for _, img := range d.Images {
		res := ta.Do("GET", img.Path, nil)
		if res.Status != 200 || res.Header.Get("Content-Type") != "image/png" {
			t.Errorf("GET %s: %d %s", img.Path, res.Status, res.Header.Get("Content-Type"))
		}
	}
	if len(d.Tools) != 3 {
		t.Fatalf("tools %+v", d.Tools)
	}
	if got := string(d.Tools[0].Result); got != `{"text":["Here it is"],"images":4}` {
		t.Errorf("row result %s", got)
	}
	for _, row := range d.Tools {
		if strings.Contains(string(row.Result), blue[:20]) || strings.Contains(string(row.Result), red[:20]) {
			t.Errorf("row %s keeps image bytes", row.ID)
		}
	}
}

// dialFeatures attaches with the features asked for.
func (ta *testApp) attachFeatures(document string, h client.Handler, features ...string) *client.Link {
	ta.T.Helper()
	ctx, cancel := contextWithTimeout()
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: document, Handler: describing(h), Features: features})
	if err != nil {
		ta.T.Fatalf("attach %s: %v", document, err)
	}
	ta.T.Cleanup(func() { l.Close() })
	return l
}

// startTurnWith is startTurn with the features asked for.
func startTurnWith(t *testing.T, source string, features ...string) (*testApp, apptest.Document, *testTurn, *apptest.Room, *client.Link) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	if source != "" {
		apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 0, "source": source}), 200, "")
	}
	browser := ta.DialRoom(ch.ID)
	ts := newTurns()
	l := ta.attachFeatures(ch.ID, ts.handler(), features...)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	return ta, ch, ts.next(t), browser, l
}

func contextWithTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), apptest.Wait)
}
