package app

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// This file plays browsers the way @codemirror/collab drives them, against the
// real server over real sockets, and checks that everybody ends with the same
// text as the server, and that the text survives a restart.

var convergenceSeed = flag.Uint64("convergence.seed", 0,
	"seed for TestConvergence; 0 picks one from the clock (it is logged either way)")

// collabUpdate is one entry of a client's outbox, or an update the server
// sent: @codemirror/collab's Update without effects.
type collabUpdate struct {
	clientID string
	changes  room.ChangeSet
}

// wireUpdate is an update as the room protocol carries it.
type wireUpdate struct {
	ClientID string         `json:"clientID"`
	Changes  room.ChangeSet `json:"changes"`
}

// socketFrame is a frame one of a client's sockets received. gen tells a
// frame of a socket the client has since closed from one of the current one.
type socketFrame struct {
	client *collabClient
	gen    int
	data   []byte
}

// collabClient is an editor tab running @codemirror/collab: the local text,
// the version it has synced up to and the local updates the server has not
// confirmed yet (the outbox). It is driven from one goroutine; its sockets'
// frames reach it through the test's frame channel.
type collabClient struct {
	t      *testing.T
	ta     *testApp
	id     string // the collab clientID
	doc    string // the document's channel ID
	frames chan<- socketFrame
	stop   <-chan struct{}
	reads  *sync.WaitGroup

	conn    *websocket.Conn // nil while offline
	gen     int             // counts sockets
	pending [][]byte        // frames of the current socket not handled yet

	epoch   string
	version int64
	text    string
	outbox  []collabUpdate

	// confirmed is the server's text at version, which a real client does
	// not keep: the test checks after every step that the outbox applied to
	// it gives text, so a wrong rebase fails where it happens.
	confirmed string

	openID   string // the plan:open awaiting its answer; "" when none
	inFlight string // the plan:push awaiting its answer; "" when none
	pushed   int    // outbox entries sent and not yet confirmed or refused
	waitFor  int64  // after a stale push: the version to reach first
	requests int

	pushes, stale, rebases int
	reopenRebased          bool // the reconnect's missed updates were rebased over a non-empty outbox
}

// connect dials a socket and opens the plan at the client's epoch and
// version: a snapshot for a new client, the missed updates for one that was
// here before.
func (c *collabClient) connect() {
	c.t.Helper()
	rc := c.ta.DialRoom(c.doc)
	c.conn, c.gen, c.pending = rc.Conn, c.gen+1, nil
	c.reads.Add(1)
	// dialRoom read the greeting with a deadline; a tab waits as long as it
	// takes.
	c.conn.SetReadDeadline(time.Time{})
	go func(conn *websocket.Conn, gen int) {
		defer c.reads.Done()
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			select {
			case c.frames <- socketFrame{c, gen, data}:
			case <-c.stop:
				return
			}
		}
	}(c.conn, c.gen)
	// Whatever the push in flight on an old socket became, the answer to
	// this open says: its updates are confirmed there, or pushed again.
	c.inFlight, c.pushed, c.waitFor = "", 0, 0
	c.openID = c.nextID("open")
	c.send(map[string]any{"type": "plan:open", "id": c.openID, "epoch": c.epoch, "version": c.version})
}

// disconnect drops the socket, as a tab that loses its network does, with
// whatever frames it had not read yet.
func (c *collabClient) disconnect() {
	c.conn.Close()
	c.conn, c.pending, c.openID, c.inFlight = nil, nil, "", ""
}

func (c *collabClient) online() bool { return c.conn != nil }

func (c *collabClient) nextID(kind string) string {
	c.requests++
	return fmt.Sprintf("%s-%s-%d", c.id, kind, c.requests)
}

func (c *collabClient) send(v any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Fatalf("%s: send: %v", c.id, err)
	}
}

// edit makes a local change, as a keystroke or a paste does: applied at
// once, queued for the server.
func (c *collabClient) edit(changes room.ChangeSet) {
	c.t.Helper()
	text, err := changes.Apply(c.text)
	if err != nil {
		c.t.Fatalf("%s: local edit %s: %v", c.id, mustJSON(changes), err)
	}
	c.text = text
	c.outbox = append(c.outbox, collabUpdate{c.id, changes})
}

// canPush is the collab example's rule: one push at a time, and not again
// until the server has confirmed (or refused) what was pushed, or the same
// updates would go twice.
func (c *collabClient) canPush() bool {
	return c.online() && c.openID == "" && c.inFlight == "" && c.pushed == 0 &&
		c.version >= c.waitFor && len(c.outbox) > 0
}

func (c *collabClient) push() {
	c.t.Helper()
	updates := make([]wireUpdate, len(c.outbox))
	for i, u := range c.outbox {
		updates[i] = wireUpdate{u.clientID, u.changes}
	}
	c.inFlight, c.pushed = c.nextID("push"), len(c.outbox)
	c.pushes++
	c.send(map[string]any{"type": "plan:push", "id": c.inFlight, "version": c.version, "updates": updates})
}

// deliver handles every frame the current socket has received so far.
func (c *collabClient) deliver() {
	c.t.Helper()
	for len(c.pending) > 0 {
		data := c.pending[0]
		c.pending = c.pending[1:]
		c.handle(data)
	}
}

func (c *collabClient) handle(data []byte) {
	c.t.Helper()
	var m struct {
		Type    string
		ID      string
		Epoch   string
		Version *int64
		Source  string
		Code    string
		Message string
		Updates []wireUpdate
	}
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("%s: frame %s: %v", c.id, data, err)
	}
	switch m.Type {
	case "plan:snapshot":
		if m.ID == "" || m.ID != c.openID {
			c.t.Fatalf("%s: snapshot it did not ask for: %s", c.id, data)
		}
		// A client with local updates cannot rebase them over a snapshot.
		// The test brings its offline client back before the journal is
		// checkpointed (see TestConvergence), so this is a server fault.
		if len(c.outbox) > 0 {
			c.t.Fatalf("%s: got a snapshot at version %d for a plan:open at %s/%d with %d local updates",
				c.id, *m.Version, c.epoch, c.version, len(c.outbox))
		}
		c.openID = ""
		c.epoch, c.version, c.text, c.confirmed = m.Epoch, *m.Version, m.Source, m.Source
	case "plan:updates":
		reopen := false
		if c.openID != "" {
			if m.ID != c.openID {
				// Broadcast between joining and the answer to plan:open,
				// which holds these updates too.
				return
			}
			c.openID, reopen = "", true
		}
		if m.Epoch != c.epoch || *m.Version != c.version {
			c.t.Fatalf("%s at %s/%d: updates for %s/%d: %s", c.id, c.epoch, c.version, m.Epoch, *m.Version, data)
		}
		updates := make([]collabUpdate, len(m.Updates))
		for i, u := range m.Updates {
			updates[i] = collabUpdate{u.ClientID, u.Changes}
		}
		if c.receive(updates) && reopen {
			c.reopenRebased = true
		}
	case "plan:ack":
		if m.ID != c.inFlight {
			c.t.Fatalf("%s: ack it did not wait for: %s", c.id, data)
		}
		c.inFlight = ""
	case "error":
		if m.Code != "stale-version" || m.ID != c.inFlight || m.Version == nil {
			c.t.Fatalf("%s: %s", c.id, data)
		}
		// Nothing was taken. The updates that made the push stale were
		// broadcast before this answer; push again once they are in.
		c.inFlight, c.pushed, c.waitFor = "", 0, *m.Version
		c.stale++
	}
}

// receive is @codemirror/collab's receiveUpdates, step for step: updates
// that head the outbox are the client's own, now confirmed; the rest are
// composed, the outbox is moved over them and they over the outbox, and the
// result applies to the local text. It reports whether it rebased anything.
func (c *collabClient) receive(updates []collabUpdate) (rebased bool) {
	c.t.Helper()
	c.version += int64(len(updates))
	var changes *room.ChangeSet // the remote changes, from the synced text on
	own := 0
	for _, u := range updates {
		c.confirmed = c.apply(u.changes, c.confirmed)
		if own < len(c.outbox) && c.outbox[own].clientID == u.clientID {
			if changes != nil {
				changes = ptr(c.mapOver(*changes, c.outbox[own].changes, true))
			}
			own++
		} else if changes == nil {
			changes = &u.changes
		} else {
			composed, err := changes.Compose(u.changes)
			if err != nil {
				c.t.Fatalf("%s: compose %s with %s: %v", c.id, mustJSON(*changes), mustJSON(u.changes), err)
			}
			changes = &composed
		}
	}
	c.outbox = c.outbox[own:]
	c.pushed = max(0, c.pushed-own)
	if len(c.outbox) > 0 && changes != nil {
		rebased = true
		c.rebases++
		for i, u := range c.outbox {
			c.outbox[i].changes = c.mapOver(u.changes, *changes, false)
			changes = ptr(c.mapOver(*changes, u.changes, true))
		}
	}
	if changes != nil {
		c.text = c.apply(*changes, c.text)
	}
	c.checkOutbox()
	return rebased
}

func (c *collabClient) mapOver(x, over room.ChangeSet, before bool) room.ChangeSet {
	c.t.Helper()
	m, err := x.Map(over, before)
	if err != nil {
		c.t.Fatalf("%s: map %s over %s: %v", c.id, mustJSON(x), mustJSON(over), err)
	}
	return m
}

func (c *collabClient) apply(changes room.ChangeSet, text string) string {
	c.t.Helper()
	out, err := changes.Apply(text)
	if err != nil {
		c.t.Fatalf("%s: apply %s to %q: %v", c.id, mustJSON(changes), text, err)
	}
	return out
}

// checkOutbox checks the client's invariant: its text is the server's text
// at its version with the outbox applied.
func (c *collabClient) checkOutbox() {
	c.t.Helper()
	text := c.confirmed
	for _, u := range c.outbox {
		text = c.apply(u.changes, text)
	}
	if text != c.text {
		c.t.Fatalf("%s at version %d: the outbox does not lead from the synced text to the local one\nsynced %q\noutbox %q\n local %q",
			c.id, c.version, c.confirmed, text, c.text)
	}
}

func (c *collabClient) settled() bool {
	return c.online() && c.openID == "" && c.inFlight == "" && c.pushed == 0 && len(c.outbox) == 0
}

func ptr[T any](v T) *T { return &v }

func mustJSON(c room.ChangeSet) string {
	b, _ := c.MarshalJSON()
	return string(b)
}

// convergenceFragments are what the clients type and paste: plain text,
// Markdown, characters that are two UTF-16 units, combining marks and ZWJ
// sequences, and line breaks of every kind.
var convergenceFragments = []string{
	"plan", "the ", "step", " ", "\t", "# Heading", "- item", "`code`", "1. ", "a & b", `"quoted"`, "<b>",
	"é", "e\u0301", "a\u0308\u0304", "漢字", "𠜎", "😀", "👍🏽", "👩‍👩‍👧", "🇫🇷", "\u2028",
	"\n", "\n\n", "\r\n", "pasted\r\nfrom\r\nWindows\r\n", "old Mac\r",
}

func randomFragments(r *rand.Rand, max int) string {
	var b strings.Builder
	for n := 1 + r.IntN(max); n > 0; n-- {
		b.WriteString(convergenceFragments[r.IntN(len(convergenceFragments))])
	}
	return b.String()
}

// randomChanges is what CodeMirror's ChangeSet.of makes of one to three
// non-overlapping inserts, deletions or replacements in text, at character
// boundaries (between a letter and its combining mark counts), with the
// inserted text split into lines as CodeMirror splits it. A long text gets
// mostly deletions, so it stays small.
func randomChanges(r *rand.Rand, text string) room.ChangeSet {
	bounds := []int{0} // UTF-16 offset of every character boundary
	for _, ch := range text {
		bounds = append(bounds, bounds[len(bounds)-1]+utf16.RuneLen(ch))
	}
	length := bounds[len(bounds)-1]
	long := length > 1200
	for {
		var parts []any
		i, end := 0, 0 // next boundary a change may start at; end of the last change
		for n := 1 + r.IntN(3); n > 0 && i < len(bounds); n-- {
			from := i + r.IntN(min(len(bounds)-i, 60))
			span := r.IntN(5)
			if long {
				span = r.IntN(80)
			}
			to := min(from+span, len(bounds)-1)
			insert, insertOdds := "", 3 // in 4
			if long {
				insertOdds = 1
			}
			if r.IntN(4) < insertOdds {
				insert = room.NormalizeLineEndings(randomFragments(r, 3))
			}
			if from == to && insert == "" {
				continue
			}
			if gap := bounds[from] - end; gap > 0 {
				parts = append(parts, gap)
			}
			section := []any{bounds[to] - bounds[from]}
			if insert != "" {
				for line := range strings.SplitSeq(insert, "\n") {
					section = append(section, line)
				}
			}
			parts = append(parts, section)
			end, i = bounds[to], to+1
		}
		if len(parts) == 0 {
			continue
		}
		if rest := length - end; rest > 0 {
			parts = append(parts, rest)
		}
		raw, err := json.Marshal(parts)
		if err != nil {
			panic(err)
		}
		c, err := room.ParseChangeSet(raw)
		if err != nil {
			panic(fmt.Sprintf("randomChanges made %s: %v", raw, err))
		}
		return c
	}
}

// TestConvergence has three tabs edit one plan at once over the room
// socket while the HTTP API edits it too; one tab goes offline for a while,
// keeps editing, comes back and replays its outbox. In the end every tab
// holds the server's text, and so does the server after a restart.
//
// The seed fixes every choice the test makes; the order in which the server
// takes concurrent pushes is the scheduler's, so a rerun with the same seed
// explores the same edits but not always the same interleaving.
func TestConvergence(t *testing.T) {
	seed := *convergenceSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (go test ./app/ -run TestConvergence -args -convergence.seed=%d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0))

	const (
		totalEdits = 300
		// The server checkpoints once its journal holds 200 updates, after
		// which a client from before the checkpoint gets a snapshot and
		// could not replay its outbox. Every edit makes at most one
		// version, so bringing the offline tab back before 180 edits keeps
		// it on the updates path.
		lastReturn = 180
	)
	goOffline := 30 + r.IntN(40)
	comeBack := min(goOffline+50+r.IntN(60), lastReturn)

	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Convergence").ID

	frames := make(chan socketFrame, 1<<14)
	stop := make(chan struct{})
	var reads sync.WaitGroup
	clients := make([]*collabClient, 3)
	for i := range clients {
		clients[i] = &collabClient{t: t, ta: ta, id: fmt.Sprintf("tab-%c", 'a'+i), doc: doc,
			frames: frames, stop: stop, reads: &reads}
	}
	defer func() { // also when the test fails halfway
		close(stop)
		for _, c := range clients {
			if c.online() {
				c.disconnect()
			}
		}
		reads.Wait()
	}()
	rnd := make([]*rand.Rand, len(clients)) // one stream a tab, so tabs do not steal each other's draws
	for i := range rnd {
		rnd[i] = rand.New(rand.NewPCG(seed, uint64(i+1)))
	}
	traveller := clients[2]

	// route files every frame that has arrived under its tab, dropping those
	// of sockets the tab has closed.
	route := func(f socketFrame) {
		if f.client.online() && f.gen == f.client.gen {
			f.client.pending = append(f.client.pending, f.data)
		}
	}
	drain := func() {
		for {
			select {
			case f := <-frames:
				route(f)
			default:
				return
			}
		}
	}
	// awaitOpen waits until the tab has its answer to plan:open.
	awaitOpen := func(c *collabClient) {
		hang := time.After(time.Minute)
		for c.openID != "" {
			select {
			case f := <-frames:
				route(f)
			case <-hang:
				t.Fatalf("%s: no answer to plan:open", c.id)
			}
			c.deliver()
		}
	}

	// The plan starts as a Windows user's import would: CRLF, normalised by
	// the server on the way in.
	serverEdits, serverStale := 0, 0
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+doc+"/plan", map[string]any{"revision": 0,
		"source": "# Convergence\r\n\r\nFirst step 😀\r\nSecond step e\u0301\r\n"}), 200, "")
	serverEdit := func() bool {
		var plan room.Plan
		ta.Do("GET", "/api/channels/"+doc+"/plan", nil).JSON(t, &plan)
		lines := strings.SplitAfter(plan.Source, "\n")
		at := r.IntN(len(lines) + 1)
		source := strings.Join(lines[:at], "") + fmt.Sprintf("Server note %d\r\n", serverEdits) + strings.Join(lines[at:], "")
		resp := ta.Do("PUT", "/api/channels/"+doc+"/plan", map[string]any{"revision": plan.Revision, "source": source})
		if resp.Status == 409 && resp.Code() == "stale-revision" {
			serverStale++ // a push got in between: fine, try another time
			return false
		}
		apptest.Want(t, resp, 200, "")
		serverEdits++
		return true
	}

	for _, c := range clients {
		c.connect()
		awaitOpen(c)
	}

	edits := 0
	for edits < totalEdits {
		drain()
		i := r.IntN(len(clients))
		c := clients[i]
		switch x := r.IntN(100); {
		case x < 45:
			c.edit(randomChanges(rnd[i], c.text))
			edits++
		case x < 70:
			if c.canPush() {
				c.push()
			}
		case x < 98:
			c.deliver()
		default:
			if serverEdit() {
				edits++
			}
		}

		switch {
		case traveller.online() && traveller.gen == 1 && edits >= goOffline:
			t.Logf("%s goes offline at version %d after %d edits, with %d local updates, push in flight: %v",
				traveller.id, traveller.version, edits, len(traveller.outbox), traveller.inFlight != "")
			traveller.disconnect()
		case !traveller.online() && edits >= comeBack:
			// Make sure there is something to rebase on both sides: a
			// local edit never pushed (what was in flight may have been
			// taken) and a change it has not seen.
			traveller.edit(randomChanges(rnd[2], traveller.text))
			edits++
			for !serverEdit() {
			}
			edits++
			t.Logf("%s comes back after %d edits with %d local updates", traveller.id, edits, len(traveller.outbox))
			traveller.connect()
			awaitOpen(traveller)
			if !traveller.reopenRebased {
				t.Fatalf("%s's reconnect did not rebase its outbox over missed updates", traveller.id)
			}
		}
	}

	// No more edits: push and receive until every outbox is empty and every
	// tab is at the same version. The deadline only stops a hang; there is
	// no timing assertion.
	deadline := time.After(2 * time.Minute)
	for {
		allSettled := true
		for _, c := range clients {
			c.deliver()
			if c.canPush() {
				c.push()
			}
			allSettled = allSettled && c.settled() && c.version == clients[0].version
		}
		if allSettled {
			break
		}
		select {
		case f := <-frames:
			route(f)
		case <-deadline:
			for _, c := range clients {
				t.Logf("%s: version %d, %d in outbox, open %q, push %q, pushed %d, waiting for %d",
					c.id, c.version, len(c.outbox), c.openID, c.inFlight, c.pushed, c.waitFor)
			}
			t.Fatal("the tabs did not settle")
		}
	}

	var plan room.Plan
	ta.Do("GET", "/api/channels/"+doc+"/plan", nil).JSON(t, &plan)
	for _, c := range clients {
		if c.text != plan.Source || c.version != plan.Version {
			t.Errorf("%s at version %d holds\n%q\nthe server at version %d holds\n%q", c.id, c.version, c.text, plan.Version, plan.Source)
		}
	}
	stats := make([]string, len(clients))
	for i, c := range clients {
		stats[i] = fmt.Sprintf("%s %d pushes, %d stale, %d rebases", c.id, c.pushes, c.stale, c.rebases)
	}
	t.Logf("%d edits (%d over HTTP, %d more refused as stale) made %d versions, %d UTF-16 units; %s",
		edits, serverEdits, serverStale, plan.Version, room.UTF16Len(plan.Source), strings.Join(stats, "; "))

	// The text is durable: a restart on the same data reads it back exactly.
	for _, c := range clients {
		c.disconnect()
	}
	reads.Wait()
	ta.Stop()
	again := startAppWith(t, ta.app.cfg)
	var after room.Plan
	again.Do("GET", "/api/channels/"+doc+"/plan", nil).JSON(t, &after)
	if after.Source != plan.Source || after.Version != plan.Version || after.Epoch != plan.Epoch {
		t.Errorf("after a restart the plan is %s/%d\n%q\nnot %s/%d\n%q",
			after.Epoch, after.Version, after.Source, plan.Epoch, plan.Version, plan.Source)
	}
}

// BenchmarkRoomFanOut measures how many edits a second one room sustains
// when one tab types and twenty more watch: each edit is committed, acked
// and sent to all twenty-one sockets. The writer waits for each ack before
// the next edit, as the collab client does; the clock stops when the last
// reader has the last edit.
func BenchmarkRoomFanOut(b *testing.B) {
	const readers = 20
	ta := startApp(b)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Fan-out").ID

	writer := ta.DialRoom(doc)
	writer.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
	snap := writer.Until("plan:snapshot")
	version, length := int64(snap["version"].(float64)), room.UTF16Len(snap["source"].(string))
	target := version + int64(b.N)

	// Each reader counts updates until it has the last one. Errors come back
	// on a channel: only the benchmark's goroutine may fail it.
	done := make(chan error, readers)
	for range readers {
		rc := ta.DialRoom(doc)
		rc.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
		rc.Until("plan:snapshot")
		rc.Conn.SetReadDeadline(time.Time{})
		go func(conn *websocket.Conn) {
			at := version
			for at < target {
				var m struct {
					Type    string
					Version int64
					Updates []json.RawMessage
				}
				if err := conn.ReadJSON(&m); err != nil {
					done <- fmt.Errorf("reader at version %d of %d: %w", at, target, err)
					return
				}
				if m.Type == "plan:updates" {
					if m.Version != at {
						done <- fmt.Errorf("reader at version %d got updates from %d", at, m.Version)
						return
					}
					at += int64(len(m.Updates))
				}
			}
			done <- nil
		}(rc.Conn)
	}

	writer.Conn.SetReadDeadline(time.Time{})
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		// Retype the last character, so the plan stays the same size.
		changes := fmt.Sprintf(`[%d,[1,"%c"]]`, length-1, 'a'+i%26)
		id := fmt.Sprint("p", i)
		writer.Send(map[string]any{"type": "plan:push", "id": id, "version": version,
			"updates": []any{map[string]any{"clientID": "writer", "changes": json.RawMessage(changes)}}})
		for {
			var m struct{ Type, ID, Code string }
			if err := writer.Conn.ReadJSON(&m); err != nil {
				b.Fatal(err)
			}
			if m.ID == id && m.Type == "plan:ack" {
				break
			}
			if m.ID == id {
				b.Fatalf("push %d: %+v", i, m)
			}
		}
		version++
	}
	for range readers {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "edits/s")
}
