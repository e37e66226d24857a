package app

// A tab that falls behind on /ws: its send queue overflows and it is closed
// with 4408 (docs/room-protocol.md), the close frame going out right after
// the frame being written, and a tab that never reads again is dropped.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// openSlowTab opens the plan on a socket whose receive buffer is small, so
// the server's frames back up soon once it stops reading.
func openSlowTab(ta *testApp, channelID string) *apptest.Room {
	ta.T.Helper()
	header := http.Header{"Origin": {ta.URL()}}
	for _, c := range ta.Browser.Jar.Cookies(apptest.MustURL(ta.URL())) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	dialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	conn, _, err := dialer.Dial("ws"+strings.TrimPrefix(ta.URL(), "http")+"/ws?channel="+channelID, header)
	if err != nil {
		ta.T.Fatalf("dial room: %v", err)
	}
	ta.T.Cleanup(func() { conn.Close() })
	rc := &apptest.Room{T: ta.T, Conn: conn}
	rc.Until("session:hello")
	rc.Send(map[string]any{"type": "plan:open", "id": "o1", "epoch": "", "version": 0})
	rc.Until("plan:snapshot")
	return rc
}

func TestSlowTabIsClosedWith4408(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Slow")
	editor := ta.DialRoom(ch.ID)
	editor.Send(map[string]any{"type": "plan:open", "id": "o1", "epoch": "", "version": 0})
	length := len(editor.Until("plan:snapshot")["source"].(string))
	slow := openSlowTab(ta, ch.ID)
	openSlowTab(ta, ch.ID) // never reads again

	// Neither slow tab reads while the editor rewrites the plan, 64 KiB at
	// a time, more times than the socket buffers (about 64 frames of 64 KiB
	// on Linux's defaults) and the queue hold. Not many more: the slow tab
	// must read again before the write in progress passes its deadline.
	const pushes = sendQueueFrames + 200
	for i := range pushes {
		text := strings.Repeat(string(rune('a'+i%26)), 64<<10)
		changes, _ := json.Marshal([]any{[]any{length, text}})
		editor.Send(map[string]any{"type": "plan:push", "id": "p", "version": i,
			"updates": []any{map[string]any{"clientID": "E", "changes": json.RawMessage(changes)}}})
		if ack := editor.Until("plan:ack"); ack["version"] != float64(i+1) {
			t.Fatalf("push %d: %v", i, ack)
		}
		length = len(text)
	}

	// Now the slow tab reads again: it gets what was already on its way,
	// not the queue behind it, and the close with its code.
	frames := 0
	slow.Conn.SetReadDeadline(time.Now().Add(apptest.Wait))
	for {
		_, _, err := slow.Conn.ReadMessage()
		if err == nil {
			frames++
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != room.CloseSlowConsumer || ce.Text != "This tab fell behind; reconnect to catch up." {
			t.Fatalf("after %d frames the socket ended with %v, want 4408", frames, err)
		}
		break
	}
	t.Logf("%d frames before the close", frames)
	if frames >= sendQueueFrames {
		t.Errorf("the tab read %d frames before the close: its queue was sent before the close", frames)
	}

	// The tab that never reads again is dropped once the write in progress
	// passes its deadline: only the editor's socket stays.
	deadline := time.Now().Add(writeWait + 2*apptest.Wait)
	for ta.app.sockets.count() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sockets open, want the editor's alone", ta.app.sockets.count())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
