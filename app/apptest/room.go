package apptest

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// The room WebSocket, /ws?channel=<id>, as the signed-in browser's tab
// opens it (docs/room-protocol.md).

// Room is a browser socket on a document's room.
type Room struct {
	T     testing.TB
	Conn  *websocket.Conn
	Hello map[string]any // the session:hello it was greeted with
}

// DialRoom opens a socket on the document's room, and returns once the
// join is complete: its snapshots have arrived.
func (a *App) DialRoom(channelID string) *Room {
	a.T.Helper()
	rc := a.OpenRoom(channelID)
	rc.Hello = rc.Until("session:hello")
	rc.Until("decisions:snapshot")
	return rc
}

// OpenRoom opens a socket on the document's room and reads nothing yet.
// It closes when the test ends.
func (a *App) OpenRoom(channelID string) *Room {
	a.T.Helper()
	header := http.Header{"Origin": {a.URL()}}
	for _, c := range a.Browser.Jar.Cookies(MustURL(a.URL())) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(a.URL(), "http")+"/ws?channel="+channelID, header)
	if err != nil {
		a.T.Fatalf("dial room: %v (%v)", err, resp)
	}
	a.T.Cleanup(func() { conn.Close() })
	return &Room{T: a.T, Conn: conn}
}

// OpenPlan opens the plan, as a tab with nothing of it yet does, and
// returns its plan:snapshot.
func (rc *Room) OpenPlan() map[string]any {
	rc.T.Helper()
	rc.Send(map[string]any{"type": "plan:open", "id": "o", "epoch": "", "version": 0})
	return rc.Until("plan:snapshot")
}

// Send sends v as a JSON text frame.
func (rc *Room) Send(v any) {
	rc.T.Helper()
	if err := rc.Conn.WriteJSON(v); err != nil {
		rc.T.Fatal(err)
	}
}

// Next reads the next frame as a generic object.
func (rc *Room) Next() map[string]any {
	rc.T.Helper()
	rc.Conn.SetReadDeadline(time.Now().Add(Wait))
	var m map[string]any
	if err := rc.Conn.ReadJSON(&m); err != nil {
		rc.T.Fatalf("read room frame: %v", err)
	}
	return m
}

// Until reads frames until one has the type, and returns it.
func (rc *Room) Until(typ string) map[string]any {
	rc.T.Helper()
	for {
		if m := rc.Next(); m["type"] == typ {
			return m
		}
	}
}

// CloseCode reads until the socket closes and returns its close code and
// text.
func (rc *Room) CloseCode() (int, string) {
	rc.T.Helper()
	rc.Conn.SetReadDeadline(time.Now().Add(Wait))
	for {
		if _, _, err := rc.Conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Text
			}
			rc.T.Fatalf("socket ended without a close frame: %v", err)
		}
	}
}
