package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/store"
)

// The rows of the table, each measured beside its baseline in the same
// run. Where Chopin and its baseline are measured repeatedly they
// alternate, one of each in turn, so a change in the machine's load falls
// on both.

// searchWord is in the title of 10 documents of each catalog.
const searchWord = "zebra"

// searchRows: a listing search that matches 10 documents of the small
// catalog and of the large one, through the HTTP API, beside the catalog's
// own SQL run directly on the same database file.
func (b *bench) searchRows(ctx context.Context, small, large bool) ([]row, error) {
	home := b.newHome("catalog")
	dbPath := filepath.Join(home.dataDir, "chopin.db")
	catalogs := []struct {
		repo string
		docs int
		on   bool
	}{{"octo/small", b.o.docs, small}, {"octo/large", b.o.largeDocs, large}}
	nodes := map[string]string{}
	for _, c := range catalogs {
		if !c.on {
			continue
		}
		start := time.Now()
		node, err := seedCatalog(ctx, dbPath, c.repo, c.docs)
		if err != nil {
			return nil, fmt.Errorf("seed %d documents: %w", c.docs, err)
		}
		nodes[c.repo] = node
		fmt.Fprintf(b.log, "seeded %d documents in %s\n", c.docs, time.Since(start).Round(time.Millisecond))
	}
	s, err := b.startChopin(ctx, home)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	bare, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer bare.Close()
	bare.SetMaxOpenConns(1)

	var rows []row
	for _, c := range catalogs {
		if !c.on {
			continue
		}
		var api, direct []time.Duration
		path := "/api/repositories/" + c.repo + "/channels?limit=50&query=" + searchWord
		for i := range b.o.searches + 3 {
			start := time.Now()
			var page struct{ Channels []json.RawMessage }
			if err := s.call("GET", path, nil, &page); err != nil {
				return nil, err
			}
			took := time.Since(start)
			if len(page.Channels) != 10 {
				return nil, fmt.Errorf("the search in %s found %d documents, not 10", c.repo, len(page.Channels))
			}
			start = time.Now()
			n, err := bareSearch(ctx, bare, nodes[c.repo], searchWord)
			if err != nil {
				return nil, err
			}
			bareTook := time.Since(start)
			if n != 10 {
				return nil, fmt.Errorf("the bare query in %s found %d documents, not 10", c.repo, n)
			}
			if i >= 3 { // the first few warm both caches
				api, direct = append(api, took), append(direct, bareTook)
			}
		}
		a, d := percentile(api, 50), percentile(direct, 50)
		r := row{name: "search", chopin: msText(a), baseline: msText(d) + " (the SQL alone)", ratio: ratioText(float64(a), float64(d))}
		if c.repo == "octo/small" {
			r.measure = fmt.Sprintf("listing search matching 10 of %s, median", thousands(c.docs))
			r.goal, r.met = "under 2 ms", met(a < 2*time.Millisecond)
		} else {
			r.name, r.measure = "search100k", fmt.Sprintf("listing search, %s documents, median", thousands(c.docs))
			r.goal, r.met = "under 5 ms", met(a < 5*time.Millisecond)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// seedCatalog adds repo to the database (made with the store's migrations)
// and n documents to it, straight into the tables in one transaction:
// through the API each would be its own fsync'd commit (minutes for
// 100,000). One in every n/10 has the search word in its title, spread
// over the catalog's recency order so a search cannot stop early.
func seedCatalog(ctx context.Context, path, repo string, n int) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return "", err
	}
	r, err := st.AddRepository(ctx, repo, "")
	st.Close()
	if err != nil {
		return "", err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		return "", err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	insertChannel, err := tx.PrepareContext(ctx, `INSERT INTO channels (id, repository_node_id, title, title_key, slug, search_text,
		created_at, updated_at, creation_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'browser')`)
	if err != nil {
		return "", err
	}
	insertSlug, err := tx.PrepareContext(ctx, `INSERT INTO channel_slugs VALUES (?, ?, ?, ?)`)
	if err != nil {
		return "", err
	}
	now := time.Now().UnixMilli() - int64(n)
	every := max(1, n/10)
	for i := range n {
		title := fmt.Sprintf("Implementation plan %06d", i)
		if i%every == every/2 {
			title = fmt.Sprintf("Zebra crossing plan %06d", i)
		}
		id, slug := store.ChannelID(r.NodeID, uuid.NewString()), store.Slug(title)
		key := strings.ToLower(title)
		if _, err := insertChannel.ExecContext(ctx, id, r.NodeID, title, key, slug, key, now+int64(i), now+int64(i)); err != nil {
			return "", err
		}
		if _, err := insertSlug.ExecContext(ctx, r.NodeID, slug, id, now); err != nil {
			return "", err
		}
	}
	return r.NodeID, tx.Commit()
}

// bareSearch is the catalog's listing query of a first page, as store runs
// it to choose the page, straight on the database file.
func bareSearch(ctx context.Context, db *sql.DB, node, query string) (int, error) {
	rows, err := db.QueryContext(ctx, `SELECT id FROM channels
		WHERE repository_node_id = ?
		  AND (? OR archived_at IS NULL)
		  AND (? = '' OR instr(search_text, ?) > 0)
		  AND (updated_at, id) < (?, ?)
		ORDER BY updated_at DESC, id DESC
		LIMIT ?`, node, false, query, query, int64(1<<63-1), "~", 51)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

// planSource is a plan of about size bytes of Markdown paragraphs.
func planSource(size int) string {
	paragraph := strings.Repeat("We plan the rollout in small, reversible steps. ", 4) + "\n\n"
	return "# Plan\n\n" + strings.Repeat(paragraph, max(1, size/len(paragraph)))
}

// ackRows: plan pushes over /ws to a 10 KB plan, each waiting for its
// plan:ack, alternating with a message to the relay's /ack, each waiting
// for its ack after an fsync'd insert; the CPU time each process spent on
// them; and the same pushes to a 250 KB plan.
func (b *bench) ackRows(ctx context.Context, ack, cpu, big bool) ([]row, error) {
	s, err := b.startChopin(ctx, b.newHome("edits"))
	if err != nil {
		return nil, err
	}
	defer s.stop()
	relay, err := b.startRelay(ctx, "edits-relay")
	if err != nil {
		return nil, err
	}
	defer relay.stop()
	if err := s.call("POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil); err != nil {
		return nil, err
	}
	type result struct {
		chopin, relay                []time.Duration
		chopinCPU, relayCPU, bareCPU time.Duration
	}
	bare, err := openBareCommits(b.tmp)
	if err != nil {
		return nil, err
	}
	defer bare.close()
	measure := func(size int) (result, error) {
		var res result
		id, err := s.createDocument("octo/plans", fmt.Sprintf("Plan of %d bytes", size), planSource(size))
		if err != nil {
			return res, err
		}
		room, err := s.openRoom(id)
		if err != nil {
			return res, err
		}
		defer room.conn.Close()
		if err := room.send(map[string]any{"type": "plan:open", "epoch": "", "version": 0}); err != nil {
			return res, err
		}
		snap, err := room.until("plan:snapshot")
		if err != nil {
			return res, err
		}
		version, length := snap.Version, len([]rune(snap.Source))
		push, err := relay.dial("/ack")
		if err != nil {
			return res, err
		}
		defer push.Close()
		const warm = 10
		var cpu0, rcpu0 time.Duration
		for i := range b.o.edits + warm {
			if i == warm {
				if cpu0, err = cpuTime(s.pid()); err != nil {
					return res, err
				}
				if rcpu0, err = cpuTime(relay.pid()); err != nil {
					return res, err
				}
			}
			msg := map[string]any{"type": "plan:push", "id": "p", "version": version,
				"updates": []any{map[string]any{"clientID": "bench", "changes": []any{[]any{0, "a"}, length}}}}
			start := time.Now()
			if err := room.send(msg); err != nil {
				return res, err
			}
			ack, err := room.until("plan:ack")
			if err != nil {
				return res, err
			}
			took := time.Since(start)
			if ack.Version != version+1 {
				return res, fmt.Errorf("plan:ack at version %d, not %d", ack.Version, version+1)
			}
			version, length = version+1, length+1

			raw, _ := json.Marshal(msg)
			start = time.Now()
			if err := push.WriteMessage(websocket.TextMessage, raw); err != nil {
				return res, err
			}
			if _, reply, err := push.ReadMessage(); err != nil || !bytes.Contains(reply, []byte(`"ack"`)) {
				return res, fmt.Errorf("the relay answered %q, %v", reply, err)
			}
			relayTook := time.Since(start)

			// The same rows committed by SQLite alone, in this process.
			own0 := ownCPU()
			if err := bare.commit(ctx, `[5000,[0,"a"],5000]`); err != nil {
				return res, err
			}
			if i >= warm {
				res.chopin, res.relay = append(res.chopin, took), append(res.relay, relayTook)
				res.bareCPU += ownCPU() - own0
			}
		}
		cpu1, err := cpuTime(s.pid())
		if err != nil {
			return res, err
		}
		rcpu1, err := cpuTime(relay.pid())
		if err != nil {
			return res, err
		}
		res.chopinCPU, res.relayCPU = (cpu1-cpu0)/time.Duration(b.o.edits), (rcpu1-rcpu0)/time.Duration(b.o.edits)
		res.bareCPU /= time.Duration(b.o.edits)
		return res, nil
	}
	small, err := measure(10_000)
	if err != nil {
		return nil, err
	}
	var rows []row
	if ack {
		c50, c99 := percentile(small.chopin, 50), percentile(small.chopin, 99)
		r50, r99 := percentile(small.relay, 50), percentile(small.relay, 99)
		rows = append(rows,
			row{"ack", "edit ack p50 over `/ws`, 10 KB plan", msText(c50), msText(r50) + " (relay)", ratioText(float64(c50), float64(r50)), "under 1.1× the relay", met(float64(c50) < 1.1*float64(r50))},
			row{"ack", "edit ack p99 over `/ws`, 10 KB plan", msText(c99), msText(r99) + " (relay)", ratioText(float64(c99), float64(r99)), "under 1.2× the relay", met(float64(c99) < 1.2*float64(r99))})
	}
	if cpu {
		rows = append(rows, row{"cpu", "CPU per edit, 10 KB plan", msText(small.chopinCPU), msText(small.relayCPU) + " (relay)",
			ratioText(float64(small.chopinCPU), float64(small.relayCPU)), "under 1.5× the relay", met(float64(small.chopinCPU) < 1.5*float64(small.relayCPU))})
		rows = append(rows, row{"cpu", "CPU per acknowledged edit, 10 KB plan, vs a bare SQLite commit of its rows", msText(small.chopinCPU),
			msText(small.bareCPU) + " (the plan's version and a journal row, one fsync'd transaction)",
			ratioText(float64(small.chopinCPU), float64(small.bareCPU)), "under 2×", met(float64(small.chopinCPU) < 2*float64(small.bareCPU))})
	}
	if big {
		large, err := measure(250_000)
		if err != nil {
			return nil, err
		}
		l50, s50 := percentile(large.chopin, 50), percentile(small.chopin, 50)
		rows = append(rows, row{"bigplan", "edit ack p50, 250 KB plan vs 10 KB plan", msText(l50), msText(s50) + " (10 KB plan)",
			ratioText(float64(l50), float64(s50)), "under 1.2×", met(float64(l50) < 1.2*float64(s50))})
	}
	return rows, nil
}

// roomRows: chopin's resident memory with rooms open, each a document of
// a 10 KB plan joined by one browser socket that opened its plan, beside
// the relay's holding as many sockets.
func (b *bench) roomRows(ctx context.Context) ([]row, error) {
	raiseFileLimit()
	s, err := b.startChopin(ctx, b.newHome("rooms"))
	if err != nil {
		return nil, err
	}
	defer s.stop()
	relay, err := b.startRelay(ctx, "rooms-relay")
	if err != nil {
		return nil, err
	}
	defer relay.stop()
	if err := s.call("POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil); err != nil {
		return nil, err
	}
	source := planSource(10_000)
	var ids []string
	for i := range b.o.rooms {
		id, err := s.createDocument("octo/plans", fmt.Sprintf("Plan %04d", i), source)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	fmt.Fprintf(b.log, "made %d documents\n", len(ids))
	// Measured in a process that has done nothing but open the rooms: the
	// memory the requests that made the documents held is not theirs.
	s.stop()
	if s, err = b.restartChopin(ctx, s); err != nil {
		return nil, err
	}
	defer s.stop()
	// Idle, before any room: both processes as they are once started and
	// settled (Chopin signed a browser in; the relay answered /healthz).
	time.Sleep(2 * time.Second)
	idle, err := residentBytes(s.pid())
	if err != nil {
		return nil, err
	}
	relayIdle, err := residentBytes(relay.pid())
	if err != nil {
		return nil, err
	}
	var sockets []*websocket.Conn
	defer func() {
		for _, c := range sockets {
			c.Close()
		}
	}()
	for _, id := range ids {
		room, err := s.openRoom(id)
		if err != nil {
			return nil, err
		}
		sockets = append(sockets, room.conn)
		if err := room.send(map[string]any{"type": "plan:open", "epoch": "", "version": 0}); err != nil {
			return nil, err
		}
		if _, err := room.until("plan:snapshot"); err != nil {
			return nil, err
		}
		// Keep reading, as a browser does, so nothing waits on this socket.
		go func() {
			for {
				if _, _, err := room.conn.ReadMessage(); err != nil {
					return
				}
			}
		}()
		conn, err := relay.dial("/idle")
		if err != nil {
			return nil, err
		}
		sockets = append(sockets, conn)
	}
	time.Sleep(2 * time.Second) // let both settle
	c, err := residentBytes(s.pid())
	if err != nil {
		return nil, err
	}
	r, err := residentBytes(relay.pid())
	if err != nil {
		return nil, err
	}
	b.holdFor("rooms", s.pid())
	return []row{
		{"rooms", fmt.Sprintf("idle process RSS before any room, %s documents of 10 KB made", thousands(b.o.rooms)), mbText(idle), mbText(relayIdle) + " (relay before any socket)",
			ratioText(float64(idle), float64(relayIdle)), "within 2× the relay", met(idle <= 2*relayIdle)},
		{"rooms", fmt.Sprintf("%s open rooms of 10 KB, process RSS", thousands(b.o.rooms)), mbText(c), mbText(r) + " (relay holding as many sockets)",
			ratioText(float64(c), float64(r)), "under 60 MB", met(c < 60<<20)}}, nil
}

// partRows: a fake Planner attached over chopin.agent.v1 streams a reply's
// text, one text-delta part each millisecond, and a browser socket on the
// room reads it; beside it the relay forwards as many messages from an
// agent socket to a browser socket. Then a burst of parts sent as fast as
// the Planner can, timed to the browser's last.
func (b *bench) partRows(ctx context.Context, paced, burst bool) ([]row, error) {
	s, err := b.startChopin(ctx, b.newHome("parts"))
	if err != nil {
		return nil, err
	}
	defer s.stop()
	relay, err := b.startRelay(ctx, "parts-relay")
	if err != nil {
		return nil, err
	}
	defer relay.stop()
	if err := s.call("POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil); err != nil {
		return nil, err
	}
	id, err := s.createDocument("octo/plans", "Streaming", "")
	if err != nil {
		return nil, err
	}
	room, err := s.openRoom(id)
	if err != nil {
		return nil, err
	}
	defer room.conn.Close()

	// The Planner streams what each turn's script says: n parts, one each
	// interval (0: at once), their send times written down.
	type script struct {
		n        int
		interval time.Duration
		sent     []time.Time
	}
	scripts := make(chan *script, 1)
	handler := client.Handler{Turn: func(ctx context.Context, turn *client.Turn) error {
		if turn.Session.Mode == wire.ModeIsolated { // a description job
			return turn.Text(`{"description": "A plan the harness streams into"}`)
		}
		sc := <-scripts
		if err := turn.Send(wire.StreamPart{Type: wire.PartTextStart, ID: "t"}); err != nil {
			return err
		}
		start := time.Now()
		for i := range sc.n {
			if sc.interval > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(i) * sc.interval)))
			}
			sc.sent[i] = time.Now()
			if err := turn.Send(wire.StreamPart{Type: wire.PartTextDelta, ID: "t", Delta: strconv.Itoa(i) + ";"}); err != nil {
				return err
			}
		}
		return turn.Send(wire.StreamPart{Type: wire.PartTextEnd, ID: "t"})
	}}
	dialCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	link, err := client.Dial(dialCtx, client.Config{URL: s.origin + "/api/v1/agent", Token: s.token, Document: id, Handler: handler})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("attach the Planner: %w", err)
	}
	defer link.Close()

	// chopinTurn runs one turn of sc and returns when the browser has every
	// part, with the time each arrived.
	chopinTurn := func(sc *script) ([]time.Time, error) {
		sc.sent = make([]time.Time, sc.n)
		scripts <- sc
		if err := room.send(map[string]any{"type": "chat:send", "id": "m", "text": "@chopin stream"}); err != nil {
			return nil, err
		}
		got := make([]time.Time, sc.n)
		var text strings.Builder
		seen := 0
		busy := 0
		for seen < sc.n {
			f, err := room.next()
			if f.Type == "error" && f.Code == "planner-busy" && busy < 100 {
				// The Planner is still writing the document's description
				// (an isolated turn): ask again once it is done.
				busy++
				time.Sleep(100 * time.Millisecond)
				if err := room.send(map[string]any{"type": "chat:send", "id": "m", "text": "@chopin stream"}); err != nil {
					return nil, err
				}
				continue
			}
			if err != nil {
				return nil, err
			}
			if f.Type == "chat:message" && bytes.Contains(f.Message, []byte(`"failed"`)) {
				return nil, fmt.Errorf("the reply failed: %.300s", f.Message)
			}
			if f.Type != "chat:delta" || f.Field != "text" {
				continue
			}
			now := time.Now()
			text.WriteString(f.Delta)
			all := text.String()
			cut := strings.LastIndexByte(all, ';')
			if cut < 0 {
				continue
			}
			for _, tok := range strings.Split(all[:cut], ";") {
				if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < sc.n && got[i].IsZero() {
					got[i] = now
					seen++
				}
			}
			text.Reset()
			text.WriteString(all[cut+1:])
		}
		// The turn ends before the next may start.
		for {
			f, err := room.next()
			if err != nil {
				return nil, err
			}
			if f.Type == "chat:message" && bytes.Contains(f.Message, []byte(`"planner"`)) && !bytes.Contains(f.Message, []byte(`"streaming"`)) {
				return got, nil
			}
		}
	}
	// relayRun sends n messages through the relay, one each interval.
	relayRun := func(n int, interval time.Duration) ([]time.Time, []time.Time, error) {
		browser, err := relay.dial("/fanout")
		if err != nil {
			return nil, nil, err
		}
		defer browser.Close()
		agent, err := relay.dial("/fanout")
		if err != nil {
			return nil, nil, err
		}
		defer agent.Close()
		time.Sleep(50 * time.Millisecond) // the browser socket is registered
		sent, got := make([]time.Time, n), make([]time.Time, n)
		var wg sync.WaitGroup
		wg.Add(1)
		var readErr error
		go func() {
			defer wg.Done()
			for range n {
				browser.SetReadDeadline(time.Now().Add(time.Minute))
				_, msg, err := browser.ReadMessage()
				if err != nil {
					readErr = err
					return
				}
				var p wire.Part
				if err := json.Unmarshal(msg, &p); err != nil {
					readErr = err
					return
				}
				i, err := strconv.Atoi(strings.TrimSuffix(p.Part.Delta, ";"))
				if err != nil || i < 0 || i >= n {
					readErr = fmt.Errorf("the relay forwarded %q", msg)
					return
				}
				got[i] = time.Now()
			}
		}()
		start := time.Now()
		for i := range n {
			if interval > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
			}
			msg, _ := json.Marshal(wire.Part{Session: "s", Turn: "t", Part: wire.StreamPart{Type: wire.PartTextDelta, ID: "t", Delta: strconv.Itoa(i) + ";"}})
			sent[i] = time.Now()
			if err := agent.WriteMessage(websocket.TextMessage, msg); err != nil {
				return nil, nil, err
			}
		}
		wg.Wait()
		return sent, got, readErr
	}
	latencies := func(sent, got []time.Time) []time.Duration {
		var ds []time.Duration
		for i := range sent {
			ds = append(ds, got[i].Sub(sent[i]))
		}
		return ds
	}

	var rows []row
	if paced {
		sc := &script{n: b.o.parts, interval: time.Millisecond}
		got, err := chopinTurn(sc)
		if err != nil {
			return nil, err
		}
		rsent, rgot, err := relayRun(b.o.parts, time.Millisecond)
		if err != nil {
			return nil, err
		}
		c, r := percentile(latencies(sc.sent, got), 50), percentile(latencies(rsent, rgot), 50)
		rows = append(rows, row{"parts", "agent parts at 1,000/s, p50 to a browser socket", msText(c), msText(r) + " (relay)",
			ratioText(float64(c), float64(r)), "under 0.5 ms", met(c < 500*time.Microsecond)})
	}
	if burst {
		sc := &script{n: b.o.burst}
		got, err := chopinTurn(sc)
		if err != nil {
			return nil, err
		}
		rsent, rgot, err := relayRun(b.o.burst, 0)
		if err != nil {
			return nil, err
		}
		rate := func(sent, got []time.Time) float64 {
			last := got[0]
			for _, t := range got {
				if t.After(last) {
					last = t
				}
			}
			return float64(len(sent)) / last.Sub(sent[0]).Seconds()
		}
		c, r := rate(sc.sent, got), rate(rsent, rgot)
		rows = append(rows, row{"throughput", fmt.Sprintf("agent parts, most per second (%s at once) to a browser socket", thousands(b.o.burst)),
			fmt.Sprintf("%s parts/s", thousands(int(c))), fmt.Sprintf("%s parts/s (relay)", thousands(int(r))),
			ratioText(c, r), "at least 60,000 parts/s", met(c >= 60_000)})
	}
	return rows, nil
}

// imageRows: a tool's 12 MB PNG (2000×2000 of noise, which no encoder can
// shrink) made into the copy Chopin stores under its default 10 MiB limit,
// by the same function the server calls, in this process.
func (b *bench) imageRows(context.Context) ([]row, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 2000, 2000))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(img.Pix); i += 8 {
		binary.LittleEndian.PutUint64(img.Pix[i:], r.Uint64())
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	w, h, err := picture.Measure(picture.PNG, data)
	if err != nil {
		return nil, err
	}
	const limit = 10 << 20
	var took, cpu []time.Duration
	for range max(1, min(3, b.o.starts)) {
		cpu0, err := cpuTime(os.Getpid())
		if err != nil {
			return nil, err
		}
		start := time.Now()
		out, err := picture.Fit(picture.PNG, data, w, h, limit)
		if err != nil {
			return nil, err
		}
		if len(out.Data) > limit {
			return nil, errors.New("the copy is over the limit")
		}
		took = append(took, time.Since(start))
		cpu1, err := cpuTime(os.Getpid())
		if err != nil {
			return nil, err
		}
		cpu = append(cpu, cpu1-cpu0)
	}
	d := percentile(took, 50)
	return []row{{"image", fmt.Sprintf("shrinking a %.0f MB PNG (tool image over the 10 MiB limit), median", float64(len(data))/1e6),
		fmt.Sprintf("%.2f s (CPU %.2f s)", d.Seconds(), percentile(cpu, 50).Seconds()), "-", "-", "under 3 s", met(d < 3*time.Second)}}, nil
}

// holdFor waits -hold with the row's processes running, for a profiler.
func (b *bench) holdFor(what string, pid int) {
	if b.o.hold > 0 {
		fmt.Fprintf(os.Stderr, "%s: holding for %s; chopin's pid is %d\n", what, b.o.hold, pid)
		time.Sleep(b.o.hold)
	}
}

func mbText(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// thousands writes n with commas: 100,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	return string(out)
}
