package apptest

// The bare WebSocket relay the benchmarks measure Chopin against: what a
// server that does nothing but the unavoidable costs, on the same sockets
// library, in the same process and on the same disk, in the same run.

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

// Relay is a bare gorilla/websocket server. A socket on /ack gets, for
// each text frame it sends, one fsync'd SQLite insert of the frame (WAL,
// synchronous=FULL, as the store commits) and then a small acknowledgement
// frame, {"type":"ack","n":<count>}. A frame sent to /fanout goes, as it
// is, to every socket on /fanout but the sender's. /idle sockets only hold
// their connection, reading.
type Relay struct {
	URL string // ws://127.0.0.1:port

	srv *httptest.Server
	db  *sql.DB
	ins *sql.Stmt

	mu      sync.Mutex
	sockets map[*websocket.Conn]*sync.Mutex // /fanout sockets and their write locks
	n       int64
}

// NewRelay starts a relay whose database file is dbPath; it stops when
// the test ends.
func NewRelay(t testing.TB, dbPath string) *Relay {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS frames (n INTEGER PRIMARY KEY, frame TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	ins, err := db.Prepare(`INSERT INTO frames (n, frame) VALUES (?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	r := &Relay{db: db, ins: ins, sockets: map[*websocket.Conn]*sync.Mutex{}}
	up := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ack", func(w http.ResponseWriter, req *http.Request) {
		conn, err := up.Upgrade(w, req, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			_, frame, err := conn.ReadMessage()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.n++
			n := r.n
			r.mu.Unlock()
			if _, err := r.ins.Exec(n, string(frame)); err != nil {
				return
			}
			if conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"ack","n":`+strconv.FormatInt(n, 10)+`}`)) != nil {
				return
			}
		}
	})
	mux.HandleFunc("/fanout", func(w http.ResponseWriter, req *http.Request) {
		conn, err := up.Upgrade(w, req, nil)
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
			conn.Close()
		}()
		for {
			_, frame, err := conn.ReadMessage()
			if err != nil {
				return
			}
			r.mu.Lock()
			for other, wmu := range r.sockets {
				if other != conn {
					wmu.Lock()
					other.WriteMessage(websocket.TextMessage, frame)
					wmu.Unlock()
				}
			}
			r.mu.Unlock()
		}
	})
	mux.HandleFunc("/idle", func(w http.ResponseWriter, req *http.Request) {
		conn, err := up.Upgrade(w, req, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	})
	r.srv = httptest.NewServer(mux)
	r.URL = "ws" + strings.TrimPrefix(r.srv.URL, "http")
	t.Cleanup(func() {
		r.srv.CloseClientConnections()
		r.srv.Close()
		ins.Close()
		db.Close()
	})
	return r
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
