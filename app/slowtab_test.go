package app

// A tab that falls behind on /ws: its send queue overflows and it is closed
// with 4408 (docs/room-protocol.md), the close frame going out right after
// the frame being written, and a tab that never reads again is dropped.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// startAppWriteWait starts the app with each frame's write deadline set
// to wait.
func startAppWriteWait(t *testing.T, wait time.Duration) *testApp {
	t.Helper()
	a, err := New(testConfig(t, t.TempDir()), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	a.sockets.wait = wait
	return &testApp{App: apptest.Serve(t, a), app: a}
}

// pushLarge has the editor rewrite the whole plan with 64 KiB of text,
// the i-th time, and waits for its acknowledgement; it returns the new
// length.
func pushLarge(t *testing.T, editor *apptest.Room, i, length int) int {
	t.Helper()
	text := strings.Repeat(string(rune('a'+i%26)), 64<<10)
	changes, _ := json.Marshal([]any{[]any{length, text}})
	editor.Send(map[string]any{"type": "plan:push", "id": "p", "version": i,
		"updates": []any{map[string]any{"clientID": "E", "changes": json.RawMessage(changes)}}})
	if ack := editor.Until("plan:ack"); ack["version"] != float64(i+1) {
		t.Fatalf("push %d: %v", i, ack)
	}
	return len(text)
}

// backedUp says whether frames wait in the send queue of a socket not in
// except and still wait a moment later: a writer blocked on full socket
// buffers, not one that has not yet taken the frame just queued (which a
// quick commit lets the test see).
func backedUp(ta *testApp, except map[*socket]bool) bool {
	if longestQueue(ta, except) == 0 {
		return false
	}
	time.Sleep(100 * time.Millisecond)
	return longestQueue(ta, except) > 0
}

// openSockets is the set of sockets open now.
func openSockets(ta *testApp) map[*socket]bool {
	open := map[*socket]bool{}
	ta.app.sockets.each(func(c *socket) { open[c] = true })
	return open
}

// longestQueue is the most frames waiting in one socket's send queue,
// among the sockets not in except (the editor's own socket reads: a frame
// waiting there says nothing about the slow tab).
func longestQueue(ta *testApp, except map[*socket]bool) int {
	most := 0
	ta.app.sockets.each(func(c *socket) {
		if except[c] {
			return
		}
		c.mu.Lock()
		most = max(most, len(c.queue))
		c.mu.Unlock()
	})
	return most
}

// openEditor opens the plan of a new document on a socket that reads, and
// returns it with the plan's length.
func openEditor(ta *testApp) (*apptest.Room, apptest.Document, int) {
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Slow")
	editor := ta.DialRoom(ch.ID)
	editor.Send(map[string]any{"type": "plan:open", "id": "o1", "epoch": "", "version": 0})
	return editor, ch, len(editor.Until("plan:snapshot")["source"].(string))
}

func TestSlowTabIsClosedWith4408(t *testing.T) {
	// A write deadline far past the test's run: the slow tab is closed for
	// its queue, never for a write that took long on a busy machine.
	ta := startAppWriteWait(t, time.Hour)
	editor, ch, length := openEditor(ta)
	editors := openSockets(ta)
	slow := openSlowTab(ta, ch.ID)

	// The slow tab does not read while the editor rewrites the plan, 64 KiB
	// at a time, until the socket buffers toward it (about 64 frames of
	// 64 KiB on Linux's defaults) are full and frames wait in its queue;
	// then the editor types a letter at a time, more times than the queue
	// holds.
	i := 0
	for ; !backedUp(ta, editors); i++ {
		if i == sendQueueFrames {
			t.Fatalf("after %d pushes of 64 KiB no frame waits in a queue", i)
		}
		length = pushLarge(t, editor, i, length)
	}
	for range sendQueueFrames + 1 {
		editor.Send(map[string]any{"type": "plan:push", "id": "p", "version": i,
			"updates": []any{map[string]any{"clientID": "E", "changes": json.RawMessage(fmt.Sprintf(`[%d,[0,"x"]]`, length))}}})
		if ack := editor.Until("plan:ack"); ack["version"] != float64(i+1) {
			t.Fatalf("push %d: %v", i, ack)
		}
		length++
		i++
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
}

func TestTabThatNeverReadsIsDropped(t *testing.T) {
	// A short write deadline, so the test need not wait writeWait.
	ta := startAppWriteWait(t, 2*time.Second)
	editor, ch, length := openEditor(ta)
	openSlowTab(ta, ch.ID) // never reads again

	// The editor rewrites the plan until the socket buffers toward the tab
	// are full, a write to it passes its deadline and the tab is dropped:
	// only the editor's socket stays.
	const most = sendQueueFrames * 4
	for i := 0; ta.app.sockets.count() != 1; i++ {
		if i == most {
			t.Fatalf("after %d pushes %d sockets are open, want the editor's alone", i, ta.app.sockets.count())
		}
		if i > 0 && i%64 == 0 {
			time.Sleep(3 * time.Second) // past a blocked write's deadline
		}
		length = pushLarge(t, editor, i, length)
	}
}
