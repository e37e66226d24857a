package main

import (
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/gorilla/websocket"
	_ "modernc.org/sqlite"
)

// The bare relay, the floor Chopin's sockets are compared with: a Go
// WebSocket server on the same libraries (gorilla/websocket, the same
// SQLite driver) that does the least a server can. /push writes each
// message as one row, in its own transaction with WAL and
// synchronous=FULL (so one fsync'd commit), then answers "ack"; /agent
// forwards each message to every socket open on /browser; /browser holds
// its socket, reading, as a server holding an idle browser does. It runs as
// its own process (`chopin-bench relay`) so its CPU time and memory are its
// own.

func runRelay(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	dbPath := fs.String("db", "", "the SQLite file to insert into")
	port := fs.Int("port", 0, "the loopback port to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+*dbPath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS journal (n INTEGER PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		return err
	}
	r := &relay{db: db, browsers: map[*relayConn]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{\"status\": \"ok\"}\n")) })
	mux.HandleFunc("/push", r.push)
	mux.HandleFunc("/agent", r.agent)
	mux.HandleFunc("/browser", r.browser)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "relay at http://%s\n", l.Addr())
	return http.Serve(l, mux)
}

type relay struct {
	db       *sql.DB
	mu       sync.Mutex
	browsers map[*relayConn]bool
}

// relayConn is a socket and the lock its writers take.
type relayConn struct {
	mu   sync.Mutex
	conn *websocket.Conn
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (r *relay) push(w http.ResponseWriter, req *http.Request) {
	conn, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if _, err := r.db.Exec(`INSERT INTO journal (body) VALUES (?)`, msg); err != nil {
			conn.WriteMessage(websocket.TextMessage, []byte(`{"type": "error"}`))
			return
		}
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type": "ack"}`)); err != nil {
			return
		}
	}
}

func (r *relay) agent(w http.ResponseWriter, req *http.Request) {
	conn, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		r.mu.Lock()
		for b := range r.browsers {
			b.mu.Lock()
			b.conn.WriteMessage(websocket.TextMessage, msg)
			b.mu.Unlock()
		}
		r.mu.Unlock()
	}
}

func (r *relay) browser(w http.ResponseWriter, req *http.Request) {
	conn, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	c := &relayConn{conn: conn}
	r.mu.Lock()
	r.browsers[c] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.browsers, c)
		r.mu.Unlock()
		conn.Close()
	}()
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}
