package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The fan-out rows: one browser socket types into a plan that twenty more
// have open, and every edit reaches all twenty; beside it the relay's
// /edits does the same with its one fsync'd insert per edit. And the CPU
// an acknowledged edit costs Chopin beside a bare SQLite commit of the rows
// an edit writes.

// fanRounds is how many times the run alternates between Chopin and the
// relay, each round sending -fan-edits/fanRounds edits to each.
const fanRounds = 5

// fanSide is one side of the fan-out: a writer and its readers, ready to
// send a round of edits.
type fanSide struct {
	// edit sends edit number i (counted over the whole run) and returns
	// once the writer's acknowledgement is back.
	edit    func(i int) error
	readers int // how many sockets watch the writer's edits (-fan-readers)
	// reached has a value each time a reader has the edit the round waits
	// for (until).
	reached chan struct{}
	mu      sync.Mutex
	until   int           // the last edit of the round
	got     [][]time.Time // per reader, when each edit arrived
	errs    chan error
}

// record notes that reader r has edits first..last (inclusive) now.
func (f *fanSide) record(r, first, last int) {
	now := time.Now()
	f.mu.Lock()
	for i := first; i <= last && i < len(f.got[r]); i++ {
		if i >= 0 && f.got[r][i].IsZero() {
			f.got[r][i] = now
		}
	}
	done := first <= f.until && f.until <= last
	f.mu.Unlock()
	if done {
		f.reached <- struct{}{}
	}
}

func newFanSide(edits, readers int) *fanSide {
	f := &fanSide{readers: readers, reached: make(chan struct{}, readers), errs: make(chan error, readers+1), got: make([][]time.Time, readers)}
	for r := range f.got {
		f.got[r] = make([]time.Time, edits)
	}
	return f
}

// round sends edits first..last-1 and waits until every reader has the
// last; it returns how long that took and when each edit was sent.
func (f *fanSide) round(first, last int, sent []time.Time) (time.Duration, error) {
	f.mu.Lock()
	f.until = last - 1
	f.mu.Unlock()
	start := time.Now()
	for i := first; i < last; i++ {
		sent[i] = time.Now()
		if err := f.edit(i); err != nil {
			return 0, err
		}
	}
	timeout := time.After(time.Minute)
	for range f.readers {
		select {
		case <-f.reached:
		case err := <-f.errs:
			return 0, err
		case <-timeout:
			return 0, errors.New("the readers did not all get the round's last edit within a minute")
		}
	}
	return time.Since(start), nil
}

// fanoutRows: edits/s delivered to all twenty readers, and the delivery
// latency's p99, beside the relay's; rounds alternate.
func (b *bench) fanoutRows(ctx context.Context) ([]row, error) {
	raiseFileLimit()
	s, err := b.startChopin(ctx, b.newHome("fanout"))
	if err != nil {
		return nil, err
	}
	defer s.stop()
	relay, err := b.startRelay(ctx, "fanout-relay")
	if err != nil {
		return nil, err
	}
	defer relay.stop()
	if err := s.call("POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil); err != nil {
		return nil, err
	}
	id, err := s.createDocument("octo/plans", "Fan-out", planSource(10_000))
	if err != nil {
		return nil, err
	}
	edits, fanReaders := b.o.fanEdits-b.o.fanEdits%fanRounds, b.o.fanReaders
	var closers []func() error
	defer func() {
		for _, c := range closers {
			c()
		}
	}()

	// Chopin: the writer pushes one character at a time into the middle of
	// the plan and waits for each plan:ack, as the collab client does;
	// each reader counts the plan:updates.
	chopin := newFanSide(edits, fanReaders)
	writer, err := s.openRoom(id)
	if err != nil {
		return nil, err
	}
	closers = append(closers, writer.conn.Close)
	if err := writer.send(map[string]any{"type": "plan:open", "epoch": "", "version": 0}); err != nil {
		return nil, err
	}
	snap, err := writer.until("plan:snapshot")
	if err != nil {
		return nil, err
	}
	base, length := snap.Version, len([]rune(snap.Source))
	for r := range fanReaders {
		rs, err := s.openRoom(id)
		if err != nil {
			return nil, err
		}
		closers = append(closers, rs.conn.Close)
		if err := rs.send(map[string]any{"type": "plan:open", "epoch": "", "version": 0}); err != nil {
			return nil, err
		}
		if _, err := rs.until("plan:snapshot"); err != nil {
			return nil, err
		}
		go func() {
			for {
				rs.conn.SetReadDeadline(time.Time{})
				_, raw, err := rs.conn.ReadMessage()
				if err != nil {
					chopin.errs <- err
					return
				}
				var m struct {
					Type    string            `json:"type"`
					Version int               `json:"version"`
					Updates []json.RawMessage `json:"updates"`
				}
				if json.Unmarshal(raw, &m) != nil || m.Type != "plan:updates" || len(m.Updates) == 0 {
					continue
				}
				// Updates from version m.Version on: edit i makes base+i+1.
				chopin.record(r, m.Version-base, m.Version-base+len(m.Updates)-1)
			}
		}()
	}
	chopin.edit = func(i int) error {
		version := base + i
		if err := writer.send(map[string]any{"type": "plan:push", "id": "p", "version": version,
			"updates": []any{map[string]any{"clientID": "bench", "changes": []any{length / 2, []any{0, "a"}, length - length/2 + i}}}}); err != nil {
			return err
		}
		for {
			f, err := writer.next()
			if err != nil {
				return err
			}
			if f.Type == "plan:ack" {
				if f.Version != version+1 {
					return fmt.Errorf("plan:ack at version %d, not %d", f.Version, version+1)
				}
				return nil
			}
		}
	}

	// The relay: the writer's frame goes to /edits, which inserts it
	// (fsync'd), answers the writer and forwards it to the other sockets.
	rel := newFanSide(edits, fanReaders)
	rwriter, err := relay.dial("/edits")
	if err != nil {
		return nil, err
	}
	closers = append(closers, rwriter.Close)
	for r := range fanReaders {
		conn, err := relay.dial("/edits")
		if err != nil {
			return nil, err
		}
		closers = append(closers, conn.Close)
		go func() {
			for {
				_, raw, err := conn.ReadMessage()
				if err != nil {
					rel.errs <- err
					return
				}
				var m struct {
					N int `json:"n"`
				}
				if json.Unmarshal(raw, &m) != nil {
					continue
				}
				rel.record(r, m.N, m.N)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // the readers are registered
	rel.edit = func(i int) error {
		raw, _ := json.Marshal(map[string]any{"type": "plan:push", "id": "p", "version": i, "n": i,
			"updates": []any{map[string]any{"clientID": "bench", "changes": []any{length / 2, []any{0, "a"}, length - length/2 + i}}}})
		if err := rwriter.WriteMessage(websocket.TextMessage, raw); err != nil {
			return err
		}
		_, reply, err := rwriter.ReadMessage()
		if err != nil {
			return err
		}
		if want := `{"type":"ack","n":` + strconv.Itoa(i) + `}`; string(reply) != want {
			return fmt.Errorf("the relay answered %q, not %q", reply, want)
		}
		return nil
	}

	chopinSent, relaySent := make([]time.Time, edits), make([]time.Time, edits)
	var chopinTook, relayTook time.Duration
	per := edits / fanRounds
	for k := range fanRounds {
		first, last := k*per, (k+1)*per
		d, err := chopin.round(first, last, chopinSent)
		if err != nil {
			return nil, fmt.Errorf("chopin: %w", err)
		}
		chopinTook += d
		if d, err = rel.round(first, last, relaySent); err != nil {
			return nil, fmt.Errorf("relay: %w", err)
		}
		relayTook += d
	}
	b.holdFor("fanout", s.pid())
	latencies := func(f *fanSide, sent []time.Time) []time.Duration {
		f.mu.Lock()
		defer f.mu.Unlock()
		var ds []time.Duration
		for r := range f.got {
			for i, t := range f.got[r] {
				ds = append(ds, t.Sub(sent[i]))
			}
		}
		return ds
	}
	cRate, rRate := float64(edits)/chopinTook.Seconds(), float64(edits)/relayTook.Seconds()
	c99, r99 := percentile(latencies(chopin, chopinSent), 99), percentile(latencies(rel, relaySent), 99)
	return []row{
		{"fanout", fmt.Sprintf("fan-out, 1 writer → %d readers, edits/s delivered to all, 10 KB plan", fanReaders),
			fmt.Sprintf("%s edits/s", thousands(int(cRate))), fmt.Sprintf("%s edits/s (relay)", thousands(int(rRate))),
			ratioText(cRate, rRate), "at least 0.9× the relay", met(cRate >= 0.9*rRate)},
		{"fanout", fmt.Sprintf("fan-out, delivery latency p99 (writer's send to each reader's frame), %s edits × %d readers", thousands(edits), fanReaders),
			msText(c99), msText(r99) + " (relay)", ratioText(float64(c99), float64(r99)), "under 1.5× the relay", met(float64(c99) < 1.5*float64(r99))},
	}, nil
}

// bareCommits is a SQLite database, in the harness's own process, holding
// the rows an accepted edit writes (the plan's version and a journal row),
// committed the way Chopin commits them (WAL, synchronous=FULL).
type bareCommits struct {
	db             *sql.DB
	update, insert *sql.Stmt
	version        int
}

func openBareCommits(dir string) (*bareCommits, error) {
	path := filepath.Join(dir, "bare-commits.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE plans (channel_id TEXT PRIMARY KEY, version INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
		CREATE TABLE plan_journal (channel_id TEXT NOT NULL, version INTEGER NOT NULL, client_id TEXT NOT NULL, changes TEXT NOT NULL,
			PRIMARY KEY (channel_id, version)) STRICT, WITHOUT ROWID;
		INSERT INTO plans VALUES ('d', 0, 0)`); err != nil {
		db.Close()
		return nil, err
	}
	bc := &bareCommits{db: db}
	if bc.update, err = db.Prepare(`UPDATE plans SET version = ?, updated_at = ? WHERE channel_id = 'd' AND version = ?`); err != nil {
		db.Close()
		return nil, err
	}
	if bc.insert, err = db.Prepare(`INSERT INTO plan_journal (channel_id, version, client_id, changes) VALUES ('d', ?, 'bench', ?)`); err != nil {
		db.Close()
		return nil, err
	}
	return bc, nil
}

// commit writes one edit's rows in one transaction.
func (bc *bareCommits) commit(ctx context.Context, changes string) error {
	tx, err := bc.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.StmtContext(ctx, bc.update).ExecContext(ctx, bc.version+1, time.Now().UnixMilli(), bc.version); err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, bc.insert).ExecContext(ctx, bc.version+1, changes); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	bc.version++
	return nil
}

func (bc *bareCommits) close() error { return bc.db.Close() }

// editRelay is the relay's /edits: each frame is inserted in its own
// fsync'd transaction, acknowledged to its sender and forwarded to every
// other /edits socket, in that order.
type editRelay struct {
	ins *sql.Stmt
	db  *sql.DB

	mu      sync.Mutex
	sockets map[*websocket.Conn]*sync.Mutex
}

func newEditRelay(path string) (*editRelay, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS edits (n INTEGER PRIMARY KEY, frame TEXT NOT NULL)`); err != nil {
		db.Close()
		return nil, err
	}
	ins, err := db.Prepare(`INSERT INTO edits (frame) VALUES (?)`)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &editRelay{ins: ins, db: db, sockets: map[*websocket.Conn]*sync.Mutex{}}, nil
}

var editUpgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (e *editRelay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	conn, err := editUpgrader.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	own := &sync.Mutex{}
	e.mu.Lock()
	e.sockets[conn] = own
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.sockets, conn)
		e.mu.Unlock()
	}()
	for {
		_, frame, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(frame, &m); err != nil {
			return
		}
		if _, err := e.ins.Exec(string(frame)); err != nil {
			fmt.Fprintln(os.Stderr, "relay /edits:", err)
			return
		}
		own.Lock()
		err = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"ack","n":`+strconv.Itoa(m.N)+`}`))
		own.Unlock()
		if err != nil {
			return
		}
		e.mu.Lock()
		for other, wmu := range e.sockets {
			if other != conn {
				wmu.Lock()
				other.WriteMessage(websocket.TextMessage, frame)
				wmu.Unlock()
			}
		}
		e.mu.Unlock()
	}
}
