package app

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// Sockets that join while a document is archived, restored or deleted: the
// room a socket joins reflects the catalog as it is once both are done,
// and a socket on a deleted document hears session:deleted and 4404.

// tryDialRoom opens a room socket as a browser does, or returns the HTTP
// status that refused it.
func (ta *testApp) tryDialRoom(channelID string) (*websocket.Conn, int) {
	header := http.Header{"Origin": {ta.URL()}}
	for _, c := range ta.Browser.Jar.Cookies(apptest.MustURL(ta.URL())) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ta.URL(), "http")+"/ws?channel="+channelID, header)
	if err != nil {
		if resp == nil {
			ta.T.Fatalf("dial room: %v", err)
		}
		return nil, resp.StatusCode
	}
	return conn, 0
}

// roomState reads a socket until the answer to its plan:open and returns
// whether the document is archived as the socket last heard, and whether it
// was told the document is gone (session:deleted, then 4404).
func roomState(t *testing.T, conn *websocket.Conn) (archived, canEdit, deleted bool) {
	t.Helper()
	conn.WriteJSON(map[string]any{"type": "plan:open", "id": "o1", "epoch": "", "version": 0})
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var m map[string]any
		if err := conn.ReadJSON(&m); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code == 4404 && deleted {
				return archived, canEdit, true
			}
			t.Fatalf("socket ended: %v (deleted heard: %v)", err, deleted)
		}
		switch m["type"] {
		case "session:hello":
			ch := m["channel"].(map[string]any)
			archived = ch["archivedAt"] != nil
			canEdit = m["canEdit"] == true
		case "session:channel":
			ch := m["channel"].(map[string]any)
			archived = ch["archivedAt"] != nil
			canEdit = m["canEdit"] == true
		case "session:deleted":
			deleted = true
		case "plan:snapshot", "plan:updates":
			if m["id"] == "o1" && !deleted {
				return archived, canEdit, false
			}
		}
	}
}

func TestSocketsJoinWhileTheCatalogChanges(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	ch := ta.CreateDocument("octo/plans", "Lifecycle")
	archived := false
	for i := range rounds {
		deleting := i%10 == 9
		var conn *websocket.Conn
		var refused int
		var wg sync.WaitGroup
		wg.Go(func() { conn, refused = ta.tryDialRoom(ch.ID) })
		wg.Go(func() {
			switch {
			case deleting:
				apptest.Want(t, ta.Do("DELETE", "/api/channels/"+ch.ID, nil), 204, "")
			case archived:
				apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/restore", nil), 200, "")
			default:
				apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
			}
		})
		wg.Wait()
		if !deleting {
			archived = !archived
		}
		switch {
		case conn == nil && deleting && refused == 404:
			// Deleted before the socket was let in.
		case conn == nil:
			t.Fatalf("round %d: the socket was refused with %d", i, refused)
		default:
			gotArchived, canEdit, deleted := roomState(t, conn)
			conn.Close()
			if deleted != deleting || (!deleting && (gotArchived != archived || canEdit == archived)) {
				t.Fatalf("round %d: the socket shows archived %v, canEdit %v, deleted %v; the document is archived %v, deleted %v",
					i, gotArchived, canEdit, deleted, archived, deleting)
			}
		}
		if deleting {
			ch = ta.CreateDocument("octo/plans", "Lifecycle")
			archived = false
		}
	}
}
