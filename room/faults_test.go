package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A Persister whose writes fail on demand, and the tests that every write
// path refuses cleanly when the disk does: the client hears an error, no
// one sees the change, and the room's memory stays what a reload from disk
// gives.

var errDiskFull = errors.New("disk full")

// faultPersister is memPersister whose n-th write (CommitPlan,
// CheckpointPlan, SaveMessage, SaveDecisions, counted from 1) fails and
// stores nothing; failing names one method whose every call fails instead.
type faultPersister struct {
	*memPersister
	mu      sync.Mutex
	writes  int
	failAt  int
	failing string
	failed  []string // the writes that failed, by method
}

func newFaultPersister() *faultPersister { return &faultPersister{memPersister: newMemPersister()} }

func (p *faultPersister) fault(method string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes++
	if p.writes == p.failAt || p.failing == method {
		p.failed = append(p.failed, method)
		return fmt.Errorf("%s: %w", method, errDiskFull)
	}
	return nil
}

func (p *faultPersister) set(failAt int, failing string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes, p.failAt, p.failing, p.failed = 0, failAt, failing, nil
}

func (p *faultPersister) CommitPlan(ctx context.Context, id string, us []Update) error {
	if err := p.fault("CommitPlan"); err != nil {
		return err
	}
	return p.memPersister.CommitPlan(ctx, id, us)
}

func (p *faultPersister) CheckpointPlan(ctx context.Context, id string, cp Checkpoint) error {
	if err := p.fault("CheckpointPlan"); err != nil {
		return err
	}
	return p.memPersister.CheckpointPlan(ctx, id, cp)
}

func (p *faultPersister) SaveMessage(ctx context.Context, m Message) error {
	if err := p.fault("SaveMessage"); err != nil {
		return err
	}
	return p.memPersister.SaveMessage(ctx, m)
}

func (p *faultPersister) SaveDecisions(ctx context.Context, id string, cards []Decision, placement []Update) error {
	if err := p.fault("SaveDecisions"); err != nil {
		return err
	}
	return p.memPersister.SaveDecisions(ctx, id, cards, placement)
}

// recConn is a member's socket that keeps every frame sent to it.
type recConn struct {
	mu     sync.Mutex
	frames []map[string]any
}

func (c *recConn) Send(frame []byte) {
	var m map[string]any
	if err := json.Unmarshal(frame, &m); err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.frames = append(c.frames, m)
	c.mu.Unlock()
}

func (c *recConn) Close(int, string) {}

// take returns the frames sent since the last take.
func (c *recConn) take() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.frames
	c.frames = nil
	return f
}

func types(frames []map[string]any) []string {
	var out []string
	for _, f := range frames {
		out = append(out, f["type"].(string))
	}
	return out
}

var ada = Identity{Login: "ada", Name: "Ada", CanEdit: true, CanManage: true}

// faultRoom is a document's room on a faultPersister with two members:
// the one who acts and one who only watches.
type faultRoom struct {
	t               *testing.T
	p               *faultPersister
	hub             *Hub
	room            *Room
	actor, watcher  *Member
	actorC, watchC  *recConn
	channel         Channel
	requestsStarted int
}

func newFaultRoom(t *testing.T, p *faultPersister) *faultRoom {
	t.Helper()
	ctx := context.Background()
	fr := &faultRoom{t: t, p: p, hub: NewHub(Options{Persister: p}), actorC: &recConn{}, watchC: &recConn{},
		channel: Channel{ID: "c1", Title: "Doc"}}
	var err error
	if fr.actor, err = fr.hub.Join(ctx, fr.channel, ada, fr.actorC); err != nil {
		t.Fatal(err)
	}
	if fr.watcher, err = fr.hub.Join(ctx, fr.channel, ada, fr.watchC); err != nil {
		t.Fatal(err)
	}
	fr.room, _ = fr.hub.Room(fr.channel.ID)
	fr.actorC.take()
	fr.watchC.take()
	return fr
}

// send has the actor send a frame and returns what the actor got back.
func (fr *faultRoom) send(frame string) []map[string]any {
	fr.actor.Receive(context.Background(), []byte(frame))
	return fr.actorC.take()
}

// push appends text to the plan as the actor's editor would.
func (fr *faultRoom) push(text string) []map[string]any {
	p := fr.room.Plan()
	insert := []any{0}
	for _, l := range strings.Split(text, "\n") {
		insert = append(insert, l)
	}
	changes, _ := json.Marshal([]any{len(p.Source), insert})
	return fr.send(fmt.Sprintf(`{"type":"plan:push","id":"p","version":%d,"updates":[{"clientID":"tab","changes":%s}]}`, p.Version, changes))
}

// state is what a room holds, as comparable text.
type state struct {
	NextSeq   int64 // the seq the next Chat message gets
	Epoch     string
	Version   int64
	Source    string
	Messages  []string
	Decisions []string
}

func roomState(t *testing.T, r *Room) state {
	t.Helper()
	p := r.Plan()
	r.mu.Lock()
	next := r.chat.nextSeq
	r.mu.Unlock()
	s := state{NextSeq: next, Epoch: p.Epoch, Version: p.Version, Source: p.Source}
	ms, err := r.Messages(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		s.Messages = append(s.Messages, fmt.Sprintf("%d %s %s", m.Seq, m.Role, m.Text))
	}
	for _, d := range r.Decisions() {
		s.Decisions = append(s.Decisions, d.ID+" "+d.Status)
	}
	return s
}

// reloaded is the room's state as a fresh hub reads it from disk.
func (fr *faultRoom) reloaded() state {
	fr.t.Helper()
	h := NewHub(Options{Persister: fr.p.memPersister})
	r, release, err := h.Acquire(context.Background(), fr.channel)
	if err != nil {
		fr.t.Fatal(err)
	}
	s := roomState(fr.t, r)
	// Its room writes a final checkpoint as it closes, in the background:
	// wait for it (Close does), or it could land after, and over, the next
	// checkpoint of the room under test.
	release()
	h.Close()
	return s
}

// inStep fails the test unless memory and disk agree.
func (fr *faultRoom) inStep(when string) {
	fr.t.Helper()
	mem, disk := roomState(fr.t, fr.room), fr.reloaded()
	// A reload checkpoints the plan at its version, which keeps the epoch.
	if fmt.Sprint(mem) != fmt.Sprint(disk) {
		fr.t.Fatalf("%s: memory and disk differ\nmemory %+v\n  disk %+v", when, mem, disk)
	}
}

func (fr *faultRoom) ask() string {
	fr.t.Helper()
	req, err := fr.room.Ask(context.Background(), QuestionCall{Method: MethodConfirm, Title: "Ship?"}, nil, nil)
	if err != nil {
		fr.t.Fatal(err)
	}
	return req
}

func (fr *faultRoom) openCard() string {
	for _, d := range fr.room.Decisions() {
		if d.Status == DecisionOpen {
			return d.ID
		}
	}
	fr.t.Fatal("no open card")
	return ""
}

// wantRefused fails unless the actor got exactly an internal error for
// request id and the watcher saw nothing.
func (fr *faultRoom) wantRefused(what string, got []map[string]any) {
	fr.t.Helper()
	if len(got) != 1 || got[0]["type"] != "error" || got[0]["code"] != CodeInternal || got[0]["id"] != "x" {
		fr.t.Errorf("%s on a failing disk: the actor got %v", what, got)
	}
	if seen := fr.watchC.take(); len(seen) > 0 {
		fr.t.Errorf("%s on a failing disk was shown to the others: %v", what, types(seen))
	}
}

func TestWritePathsRefuseWhenTheDiskFails(t *testing.T) {
	paths := []struct {
		name   string
		method string // the write that fails
		prep   func(fr *faultRoom)
		do     func(fr *faultRoom) []map[string]any
		wantOK []string // what the actor gets when the disk works
	}{
		{"plan:push", "CommitPlan", nil, func(fr *faultRoom) []map[string]any {
			p := fr.room.Plan()
			changes, _ := json.Marshal([]any{len(p.Source), []any{0, "More."}})
			return fr.send(fmt.Sprintf(`{"type":"plan:push","id":"x","version":%d,"updates":[{"clientID":"tab","changes":%s}]}`, p.Version, changes))
		}, []string{"plan:updates", "plan:ack"}},
		{"chat:send", "SaveMessage", nil, func(fr *faultRoom) []map[string]any {
			return fr.send(`{"type":"chat:send","id":"x","text":"Hello"}`)
		}, []string{"chat:message", "ok"}},
		{"decision:answer", "SaveDecisions", func(fr *faultRoom) { fr.ask() }, func(fr *faultRoom) []map[string]any {
			return fr.send(`{"type":"decision:answer","id":"x","decision":"` + fr.openCard() + `","answer":{"yes":true}}`)
		}, []string{"decision:update", "ok"}},
		{"decision:cancel", "SaveDecisions", func(fr *faultRoom) { fr.ask() }, func(fr *faultRoom) []map[string]any {
			return fr.send(`{"type":"decision:cancel","id":"x","decision":"` + fr.openCard() + `"}`)
		}, []string{"decision:update", "ok"}},
	}
	for _, tt := range paths {
		t.Run(tt.name, func(t *testing.T) {
			p := newFaultPersister()
			fr := newFaultRoom(t, p)
			if tt.prep != nil {
				tt.prep(fr)
				fr.actorC.take()
				fr.watchC.take()
			}
			before := roomState(t, fr.room)
			p.set(0, tt.method)
			fr.wantRefused(tt.name, tt.do(fr))
			if len(p.failed) != 1 {
				t.Fatalf("failed writes %v", p.failed)
			}
			if after := roomState(t, fr.room); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("a refused %s changed the room:\nbefore %+v\n after %+v", tt.name, before, after)
			}
			fr.inStep("after the refusal")

			// Once the disk works again the same request goes through.
			p.set(0, "")
			if got := types(tt.do(fr)); !slices.Equal(got, tt.wantOK) {
				t.Errorf("%s after the disk recovered: %v, want %v", tt.name, got, tt.wantOK)
			}
			if seen := fr.watchC.take(); len(seen) != 1 {
				t.Errorf("the others saw %v", types(seen))
			}
			fr.inStep("after the retry")
		})
	}
}

func TestAskRefusesWhenTheDiskFails(t *testing.T) {
	p := newFaultPersister()
	fr := newFaultRoom(t, p)
	before := roomState(t, fr.room)
	p.set(0, "SaveDecisions")
	if _, err := fr.room.Ask(context.Background(), QuestionCall{Method: MethodConfirm, Title: "Ship?"}, nil, nil); !errors.Is(err, errDiskFull) {
		t.Fatalf("Ask on a failing disk: %v", err)
	}
	if seen := fr.watchC.take(); len(seen) > 0 {
		t.Errorf("a question that was not stored was shown: %v", types(seen))
	}
	if after := roomState(t, fr.room); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused question changed the room:\nbefore %+v\n after %+v", before, after)
	}
	if len(fr.room.OpenRequests()) != 0 {
		t.Errorf("open requests %v", fr.room.OpenRequests())
	}
	fr.inStep("after the refusal")
}

// An HTTP edit or the Planner's edit_plan (ReplaceText) on a failing disk
// is refused and shown to no one; once the disk works it goes through.
func TestServerEditRefusesWhenTheDiskFails(t *testing.T) {
	p := newFaultPersister()
	fr := newFaultRoom(t, p)
	before := roomState(t, fr.room)
	edit := func() (int64, error) {
		pl := fr.room.Plan()
		return fr.room.ReplaceText(context.Background(), pl.Version, pl.Source+"More.\n")
	}
	p.set(0, "CommitPlan")
	if _, err := edit(); !errors.Is(err, errDiskFull) {
		t.Fatalf("an edit on a failing disk: %v", err)
	}
	if seen := fr.watchC.take(); len(seen) > 0 {
		t.Errorf("an edit that was not stored was shown: %v", types(seen))
	}
	if after := roomState(t, fr.room); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused edit changed the room:\nbefore %+v\n after %+v", before, after)
	}
	fr.inStep("after the refusal")
	p.set(0, "")
	if v, err := edit(); err != nil || v != before.Version+1 {
		t.Fatalf("the edit after the disk recovered: %d %v", v, err)
	}
	if got := types(fr.watchC.take()); !slices.Equal(got, []string{"plan:updates"}) {
		t.Errorf("the others saw %v", got)
	}
	fr.inStep("after the retry")
}

// A failed checkpoint loses nothing: the journal still holds every update.
func TestFailedCheckpointKeepsTheJournal(t *testing.T) {
	p := newFaultPersister()
	fr := newFaultRoom(t, p)
	p.set(0, "CheckpointPlan")
	for i := range checkpointEvery + 5 {
		if got := types(fr.push(fmt.Sprintf("line %d\n", i))); !slices.Equal(got, []string{"plan:updates", "plan:ack"}) {
			t.Fatalf("push %d: %v", i, got)
		}
	}
	if !slices.Contains(p.failed, "CheckpointPlan") {
		t.Fatal("no checkpoint was tried")
	}
	fr.inStep("after a failed checkpoint")
	// The next update tries the checkpoint again.
	p.set(0, "")
	fr.push("after\n")
	p.memPersister.mu.Lock() // the stored plan's lock, not the fault counter's
	cp := p.plans[fr.channel.ID].Checkpoint.Version
	p.memPersister.mu.Unlock()
	if v := fr.room.Plan().Version; cp != v {
		t.Errorf("after the disk recovered the checkpoint is at %d, the plan at %d", cp, v)
	}
	fr.inStep("after the next checkpoint")
}

// Whichever write fails in a session of every kind of change, the room and
// the disk agree afterwards, and every failure was told to the client.
func TestAnyFailedWriteKeepsMemoryAndDiskInStep(t *testing.T) {
	script := func(fr *faultRoom) (refused int) {
		count := func(got []map[string]any) {
			for _, f := range got {
				if f["type"] == "error" {
					refused++
				}
			}
		}
		count(fr.push("One.\n"))
		count(fr.send(`{"type":"chat:send","id":"c","text":"Hello"}`))
		if _, err := fr.room.Ask(context.Background(), QuestionCall{Method: MethodConfirm, Title: "Ship?"}, nil, nil); err != nil {
			refused++
		}
		for _, d := range fr.room.Decisions() {
			if d.Status == DecisionOpen {
				count(fr.send(`{"type":"decision:answer","id":"a","decision":"` + d.ID + `","answer":{"yes":true}}`))
			}
		}
		count(fr.push("Two.\n"))
		pl := fr.room.Plan()
		if _, err := fr.room.ReplaceText(context.Background(), pl.Version, pl.Source+"Three.\n"); err != nil {
			refused++
		}
		count(fr.send(`{"type":"chat:send","id":"c","text":"Bye"}`))
		return refused
	}
	// The writes of the script on a working disk.
	p := newFaultPersister()
	fr := newFaultRoom(t, p)
	p.set(0, "")
	if n := script(fr); n != 0 {
		t.Fatalf("%d refusals on a working disk", n)
	}
	writes := p.writes
	if writes < 6 {
		t.Fatalf("the script made %d writes", writes)
	}
	for n := 1; n <= writes; n++ {
		p := newFaultPersister()
		fr := newFaultRoom(t, p)
		p.set(n, "")
		refused := script(fr)
		if len(p.failed) != 1 || refused != 1 {
			t.Errorf("write %d failed (%v): %d refusals, want 1", n, p.failed, refused)
		}
		fr.inStep(fmt.Sprintf("write %d (%s) failed", n, strings.Join(p.failed, "")))
	}
}
