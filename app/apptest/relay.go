package apptest

// The bare WebSocket relay the benchmarks measure Chopin against: what a
// server that does nothing but the unavoidable costs, on the same sockets
// library and SQLite driver, on the same disk, in the same run. The go test
// benchmarks run it in their own process (NewRelay); cmd/chopin-bench
// serves the same handler from a process of its own (RelayHandler).

import (
	"database/sql"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
	_ "modernc.org/sqlite" // the database/sql driver the store uses
)

// Relay is the relay's handler served on a loopback port until the test
// ends.
type Relay struct {
	URL string // ws://127.0.0.1:port
}

// NewRelay starts a relay whose database file is dbPath; it stops when
// the test ends.
func NewRelay(t testing.TB, dbPath string) *Relay {
	t.Helper()
	h, closeDB, err := RelayHandler(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		closeDB()
	})
	return &Relay{URL: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// Dial opens a socket on the relay's path ("/ack", "/fanout" or "/idle").
func (r *Relay) Dial(t testing.TB, path string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(r.URL+path, nil)
	if err != nil {
		t.Fatalf("dial relay: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// RelayHandler is a bare gorilla/websocket server over the SQLite file at
// dbPath (made if missing), and what closes that file. A socket on /ack
// gets, for each text frame it sends, one fsync'd insert of the frame
// (WAL, synchronous=FULL, as the store commits) and then a small
// acknowledgement frame, {"type":"ack","n":<count>}. A frame sent to
// /fanout goes, as it is, to every other socket on /fanout. /idle sockets
// only hold their connection, reading. /healthz answers 200.
func RelayHandler(dbPath string) (http.Handler, func() error, error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS frames (n INTEGER PRIMARY KEY, frame TEXT NOT NULL)`); err != nil {
		db.Close()
		return nil, nil, err
	}
	ins, err := db.Prepare(`INSERT INTO frames (n, frame) VALUES (?, ?)`)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	r := &relay{ins: ins, sockets: map[*websocket.Conn]*sync.Mutex{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{\"status\": \"ok\"}\n")) })
	mux.HandleFunc("/ack", r.ack)
	mux.HandleFunc("/fanout", r.fanout)
	mux.HandleFunc("/idle", r.idle)
	return mux, func() error { ins.Close(); return db.Close() }, nil
}

type relay struct {
	ins *sql.Stmt

	mu      sync.Mutex
	sockets map[*websocket.Conn]*sync.Mutex // /fanout sockets and their write locks
	n       int64
}

var relayUpgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// readEach hands each frame the socket sends to frame, until one fails or
// the socket closes, and then closes it.
func readEach(conn *websocket.Conn, frame func([]byte) error) {
	defer conn.Close()
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil || frame(msg) != nil {
			return
		}
	}
}

func (r *relay) ack(w http.ResponseWriter, req *http.Request) {
	conn, err := relayUpgrader.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	readEach(conn, func(frame []byte) error {
		r.mu.Lock()
		r.n++
		n := r.n
		r.mu.Unlock()
		if _, err := r.ins.Exec(n, string(frame)); err != nil {
			return err
		}
		return conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"ack","n":`+strconv.FormatInt(n, 10)+`}`))
	})
}

func (r *relay) fanout(w http.ResponseWriter, req *http.Request) {
	conn, err := relayUpgrader.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.sockets[conn] = &sync.Mutex{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.sockets, conn)
		r.mu.Unlock()
	}()
	readEach(conn, func(frame []byte) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		for other, wmu := range r.sockets {
			if other != conn {
				wmu.Lock()
				other.WriteMessage(websocket.TextMessage, frame)
				wmu.Unlock()
			}
		}
		return nil
	})
}

func (r *relay) idle(w http.ResponseWriter, req *http.Request) {
	if conn, err := relayUpgrader.Upgrade(w, req, nil); err == nil {
		readEach(conn, func([]byte) error { return nil })
	}
}
