package app

// An idle browser socket holds one goroutine, its reader: nothing waits
// to write for it, and its pings are timers.

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestIdleSocketsHoldOneGoroutineEach(t *testing.T) {
	const tabs = 30
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Idle")
	first := ta.DialRoom(ch.ID) // the room is open
	first.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
	first.Until("plan:snapshot")
	settled := func() int {
		// Opening a document starts work that ends: wait for the count to
		// stop falling.
		n, still := runtime.NumGoroutine(), 0
		for deadline := time.Now().Add(20 * time.Second); still < 5 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			if m := runtime.NumGoroutine(); m < n {
				n, still = m, 0
			} else {
				n, still = m, still+1
			}
		}
		return n
	}
	before := settled()
	for range tabs {
		rc := ta.DialRoom(ch.ID)
		rc.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
		rc.Until("plan:snapshot")
	}
	// The test's client sockets start no goroutines of their own.
	if grown := settled() - before; grown > tabs+3 {
		t.Errorf("%d idle sockets hold %d goroutines", tabs, grown)
	}
}

// While the reader handles a frame, what the member sends waits for it to
// finish; Flush writes it at once (a push's acknowledgement goes out before
// the checkpoint the push made due).
func TestSocketFlushWritesWhileReceiving(t *testing.T) {
	server := make(chan *socket, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := roomUpgrader.Upgrade(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		server <- &socket{conn: conn}
	}))
	defer srv.Close()
	client, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sock := <-server
	defer sock.conn.Close()

	sock.mu.Lock()
	sock.receiving = true // as receive sets it around the member's handling
	sock.mu.Unlock()
	sock.Send([]byte(`{"type":"plan:ack","version":1}`))
	sock.mu.Lock()
	held := len(sock.queue)
	sock.mu.Unlock()
	if held != 1 {
		t.Fatalf("%d frames queued while receiving, want the one held", held)
	}
	sock.Flush()
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang, not a latency bound
	_, frame, err := client.ReadMessage()
	if err != nil || string(frame) != `{"type":"plan:ack","version":1}` {
		t.Fatalf("after Flush the client read %q, %v", frame, err)
	}
}
