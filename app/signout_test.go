package app

// Signing out everywhere closes the room sockets the ended sessions opened.

import (
	"net/http"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// TestSignOutEverywhereClosesRoomSockets: every tab's socket, on any
// document, closes with 4401 when every browser is signed out (here by a
// script with the agent token, as chopin open --sign-out-everywhere does
// through a running Chopin), and the old cookie opens no new one.
func TestSignOutEverywhereClosesRoomSockets(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	first := ta.CreateDocument("octo/plans", "First")
	second := ta.CreateDocument("octo/plans", "Second")
	tabs := []*apptest.Room{ta.DialRoom(first.ID), ta.DialRoom(first.ID), ta.DialRoom(second.ID)}

	r := ta.Request(&http.Client{}, "POST", "/api/session/sign-out-everywhere", nil,
		map[string]string{"Authorization": "Bearer " + ta.Token()})
	apptest.Want(t, r, http.StatusOK, "")
	for i, tab := range tabs {
		if code, text := tab.CloseCode(); code != CloseSignedOut || text != signedOutReason {
			t.Errorf("tab %d closed with %d %q, want %d", i, code, text, CloseSignedOut)
		}
	}

	header := http.Header{"Origin": {ta.URL()}}
	for _, c := range ta.Browser.Jar.Cookies(apptest.MustURL(ta.URL())) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	_, resp, err := websocket.DefaultDialer.Dial("ws"+ta.URL()[len("http"):]+"/ws?channel="+first.ID, header)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a socket with the signed-out cookie: %v %v, want 401", err, resp)
	}
}
