package app

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/store"
)

// BenchmarkEditAck measures how long a browser waits from sending a plan
// push to its acknowledgement, which comes only after the update is on disk,
// and the CPU the whole process spends per push. In the same run, rotating
// one push of each per round, it measures:
//
//   - ack-10k: a one-character push to a 10 KB plan;
//   - ack-250k: the same to a 250 KB plan (a push should cost the same);
//   - relay: a bare gorilla/websocket relay in the same process that does
//     one fsync'd SQLite insert per frame (WAL, synchronous=FULL) before it
//     answers, sent the same push frame by the same client;
//   - sqlite: a bare SQLite commit of a journal row and a counter.
//
// The ratios are what Chopin adds around the commit.
func BenchmarkEditAck(b *testing.B) {
	ta := startApp(b)
	ta.AddRepository("octo/plans")
	small := newAckPusher(b, ta, "Small plan", 10_000)
	big := newAckPusher(b, ta, "Big plan", 250_000)
	dir := filepath.Dir(ta.app.cfg.DataDir)
	relay := apptest.NewRelay(b, filepath.Join(dir, "relay.db")).Dial(b, "/ack")
	bare := openBareSQLite(b, filepath.Join(dir, "bare.db"))
	defer bare.Close()

	const kinds = 4
	names := [kinds]string{"ack-10k", "ack-250k", "relay", "sqlite"}
	var lat [kinds][]time.Duration
	var cpu [kinds]time.Duration
	ops := [kinds]func(i int){
		small.push,
		big.push,
		func(i int) {
			relay.WriteJSON(map[string]any{"type": "plan:push", "id": "p", "version": i,
				"updates": []any{map[string]any{"clientID": "bench", "changes": insertAt(5000, 10000+i, "a")}}})
			var m map[string]any
			if err := relay.ReadJSON(&m); err != nil || m["type"] != "ack" {
				b.Fatalf("relay: %v %v", m, err)
			}
		},
		func(i int) { bareCommit(b, bare, i) },
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range kinds {
			k := (i + j) % kinds
			c0, t0 := processCPU(), time.Now()
			ops[k](i)
			lat[k] = append(lat[k], time.Since(t0))
			cpu[k] += processCPU() - c0
		}
	}
	b.StopTimer()
	var p50, p99 [kinds]time.Duration
	for k := range kinds {
		p50[k], p99[k] = percentile(lat[k], 50), percentile(lat[k], 99)
		b.ReportMetric(ms(p50[k]), names[k]+"-p50-ms")
		b.ReportMetric(ms(p99[k]), names[k]+"-p99-ms")
		b.ReportMetric(float64(cpu[k])/float64(b.N)/1e6, names[k]+"-cpu-ms")
	}
	const app, app250, rel, raw = 0, 1, 2, 3
	b.ReportMetric(float64(p50[app])/float64(p50[rel]), "relay-ratio-p50")
	b.ReportMetric(float64(p99[app])/float64(p99[rel]), "relay-ratio-p99")
	b.ReportMetric(float64(cpu[app])/float64(cpu[rel]), "relay-ratio-cpu")
	b.ReportMetric(float64(p50[app250])/float64(p50[app]), "250k-ratio-p50")
	b.ReportMetric(float64(p50[app])/float64(p50[raw]), "sqlite-ratio-p50")
	b.ReportMetric(float64(p99[app])/float64(p99[raw]), "sqlite-ratio-p99")
}

// ackPusher is a browser socket that pushes one-character edits into the
// middle of a plan of a given size and waits for each acknowledgement.
type ackPusher struct {
	b       *testing.B
	rc      *apptest.Room
	version int
	length  int
}

func newAckPusher(b *testing.B, ta *testApp, title string, size int) *ackPusher {
	ch := ta.CreateDocument("octo/plans", title)
	paragraph := strings.Repeat("We plan the rollout in small, reversible steps. ", 4) + "\n\n"
	source := "# Plan\n\n" + strings.Repeat(paragraph, size/len(paragraph))
	if err := ta.app.store.CheckpointPlan(context.Background(), ch.ID, store.PlanCheckpoint{Epoch: "e", Source: source}); err != nil {
		b.Fatal(err)
	}
	rc := ta.DialRoom(ch.ID)
	rc.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
	snap := rc.Until("plan:snapshot")
	return &ackPusher{b: b, rc: rc, version: int(snap["version"].(float64)), length: len(snap["source"].(string))}
}

func (p *ackPusher) push(int) {
	p.rc.Send(map[string]any{"type": "plan:push", "id": "p", "version": p.version,
		"updates": []any{map[string]any{"clientID": "bench", "changes": insertAt(p.length/2, p.length, "a")}}})
	if ack := p.rc.Until("plan:ack"); ack["version"] != float64(p.version+1) {
		p.b.Fatalf("ack %v", ack)
	}
	p.version++
	p.length++
}

func openBareSQLite(b *testing.B, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE journal (v INTEGER PRIMARY KEY, client TEXT, changes TEXT);
		CREATE TABLE counter (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO counter VALUES (1, 0)`); err != nil {
		b.Fatal(err)
	}
	return db
}

// bareCommit is what an accepted push costs SQLite alone: a journal row and
// the counter, in one transaction.
func bareCommit(b *testing.B, db *sql.DB, i int) {
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	tx.Exec(`INSERT INTO journal VALUES (?, 'bench', '[[0,"a"],120]')`, i+1)
	tx.Exec(`UPDATE counter SET v = ? WHERE id = 1`, i+1)
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// startWithPlans starts the app with n documents in octo/plans, each with
// a 10 KB plan checkpointed.
func startWithPlans(b *testing.B, n int) (*testApp, []store.Channel) {
	ta := startApp(b)
	ta.AddRepository("octo/plans")
	ctx := context.Background()
	repo, _ := ta.app.store.RepositoryByName(ctx, "octo", "plans")
	paragraph := strings.Repeat("We plan the rollout in small, reversible steps. ", 4) + "\n\n"
	source := "# Plan\n\n" + strings.Repeat(paragraph, 10_000/len(paragraph))
	var channels []store.Channel
	for i := range n {
		ch, err := ta.app.store.CreateChannel(ctx, repo.NodeID, fmt.Sprintf("Plan %04d", i))
		if err != nil {
			b.Fatal(err)
		}
		if err := ta.app.store.CheckpointPlan(ctx, ch.ID, store.PlanCheckpoint{Epoch: "e", Source: source}); err != nil {
			b.Fatal(err)
		}
		channels = append(channels, ch)
	}
	return ta, channels
}

// BenchmarkOpenRooms measures the memory 1,000 open rooms hold, each a
// document with a 10 KB plan, Chat and Decisions loaded: the heap after a
// collection, less the heap before they opened.
func BenchmarkOpenRooms(b *testing.B) {
	const rooms = 1000
	ta, channels := startWithPlans(b, rooms)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		before := heapInUse()
		var releases []func()
		for _, ch := range channels {
			_, release, err := ta.app.hub.Acquire(ctx, ta.app.roomChannel(ch))
			if err != nil {
				b.Fatal(err)
			}
			releases = append(releases, release)
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/(1<<20), "MB/1000-rooms")
		if ta.app.hub.OpenRooms() != rooms {
			b.Fatalf("%d rooms open", ta.app.hub.OpenRooms())
		}
		for _, release := range releases {
			release()
		}
	}
}

// BenchmarkOpenSockets measures what 1,000 open documents cost when each
// has a browser socket on it, as a person's tabs hold them: 1,000 rooms of
// a 10 KB plan, each joined by one socket that opened the plan. In the same
// run, a bare gorilla/websocket relay holds 1,000 idle sockets from the
// same client. Both report the heap and goroutine stacks the process holds
// for them (after a collection) and the growth of the process's resident
// memory; the client's side of every socket is in the same process, and the
// same on both.
func BenchmarkOpenSockets(b *testing.B) {
	const rooms = 1000
	ta, channels := startWithPlans(b, rooms)
	relay := apptest.NewRelay(b, filepath.Join(filepath.Dir(ta.app.cfg.DataDir), "relay.db"))
	b.ResetTimer()
	for range b.N {
		mem0, rss0 := heldMemory(), processRSS()
		var conns []*websocket.Conn
		for range rooms {
			conns = append(conns, relay.Dial(b, "/idle"))
		}
		relayMem, relayRSS := heldMemory()-mem0, processRSS()-rss0
		for _, c := range conns {
			c.Close()
		}
		conns = nil

		mem0, rss0 = heldMemory(), processRSS()
		stacks0 := stackInUse()
		goroutines0 := runtime.NumGoroutine()
		for _, ch := range channels {
			rc := ta.DialRoom(ch.ID)
			rc.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
			rc.Until("plan:snapshot")
			conns = append(conns, rc.Conn)
		}
		// Opening a document starts work that ends (its description is
		// checked): measure once the goroutines it started are done.
		for n, still, deadline := runtime.NumGoroutine(), 0, time.Now().Add(time.Minute); still < 10 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			if m := runtime.NumGoroutine(); m < n {
				n, still = m, 0
			} else {
				still++
			}
		}
		appMem, appRSS := heldMemory()-mem0, processRSS()-rss0
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines0)/rooms, "goroutines/socket")
		b.ReportMetric(float64(stackInUse()-stacks0)/rooms/1024, "stack-KB/socket")
		if ta.app.hub.OpenRooms() != rooms {
			b.Fatalf("%d rooms open", ta.app.hub.OpenRooms())
		}
		for _, c := range conns {
			c.Close()
		}
		b.ReportMetric(float64(appMem)/(1<<20), "MB-held")
		b.ReportMetric(float64(relayMem)/(1<<20), "relay-MB-held")
		b.ReportMetric(float64(appRSS)/(1<<20), "MB-RSS-growth")
		b.ReportMetric(float64(relayRSS)/(1<<20), "relay-MB-RSS-growth")
		b.ReportMetric(float64(processRSS())/(1<<20), "process-RSS-MB")
		b.ReportMetric(float64(appMem)/float64(relayMem), "ratio-held")
	}
}

// heldMemory is the heap in use and the goroutine stacks after a
// collection, with freed memory given back to the system.
func heldMemory() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// stackInUse is the goroutine stacks' memory once idle stacks have shrunk:
// a collection halves a stack at most, and only one using under a quarter
// of it, so a stack grown while a frame was handled takes a few.
func stackInUse() int64 {
	for range 10 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.StackInuse)
}

// processRSS is the resident memory of this process, in bytes (0 where
// /proc is not there).
func processRSS() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkMCPPlan measures the MCP tools that read and write a plan,
// read_document (its first page) and update_document, on a 100 KB plan,
// through the official Go SDK's client over /mcp, and in the same run,
// alternately, the HTTP API's GET and PUT of the same plan. The ratios are
// what MCP adds: JSON-RPC, the session, the locator, the page's text, the
// replay record.
func BenchmarkMCPPlan(b *testing.B) {
	ta := startApp(b)
	ta.AddRepository("octo/plans")
	cs := ta.mcpSession("bench")
	var sb strings.Builder
	sb.WriteString("# Bench\n\n")
	for i := 0; sb.Len() < 100_000; i++ {
		fmt.Fprintf(&sb, "Paragraph %d: %s\n\n", i, strings.Repeat("plan text ", 20))
	}
	made := callTool(b, cs, "create_document", map[string]any{"idempotencyKey": "bench", "repository": "octo/plans", "title": "Bench", "plan": sb.String()})
	id := made.str("id")
	auth := map[string]string{"Authorization": "Bearer " + ta.Token()}
	source := sb.String()

	n := b.N
	var mcpRead, httpGet, mcpUpdate, httpPut []time.Duration
	revision := 0
	b.ResetTimer()
	for i := range n {
		start := time.Now()
		if r := callTool(b, cs, "read_document", map[string]any{"id": id}); r.IsError {
			b.Fatal(r.Data)
		}
		mcpRead = append(mcpRead, time.Since(start))

		start = time.Now()
		if r := ta.Request(http.DefaultClient, "GET", "/api/channels/"+id+"/plan", nil, auth); r.Status != 200 {
			b.Fatal(r.Status)
		}
		httpGet = append(httpGet, time.Since(start))

		source += "x"
		start = time.Now()
		r := callTool(b, cs, "update_document", map[string]any{"id": id, "revision": revision, "plan": source, "idempotencyKey": fmt.Sprint("u", i)})
		if r.IsError {
			b.Fatal(r.Data)
		}
		mcpUpdate = append(mcpUpdate, time.Since(start))
		revision++

		source += "y"
		start = time.Now()
		if r := ta.Request(http.DefaultClient, "PUT", "/api/channels/"+id+"/plan", map[string]any{"revision": revision, "source": source}, auth); r.Status != 200 {
			b.Fatal(r.Status, string(r.Body))
		}
		httpPut = append(httpPut, time.Since(start))
		revision++
	}
	b.StopTimer()
	report := func(name string, mcpT, httpT []time.Duration) {
		m, h := percentile(mcpT, 50), percentile(httpT, 50)
		b.ReportMetric(ms(m), name+"-mcp-p50-ms")
		b.ReportMetric(ms(h), name+"-http-p50-ms")
		b.ReportMetric(float64(m)/float64(h), name+"-ratio-p50")
	}
	report("read", mcpRead, httpGet)
	report("update", mcpUpdate, httpPut)
}
