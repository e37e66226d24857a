package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// timelineJSON is GET …/timeline.
type timelineJSON struct {
	Sessions []timelineSession `json:"sessions"`
	Next     *int64            `json:"next"`
}

// planNow is the plan's revision and text, as GET …/plan answers them.
func (ta *testApp) planNow(t *testing.T, id string) (int64, string) {
	t.Helper()
	var p struct {
		Revision int64
		Source   string
	}
	r := ta.Do("GET", "/api/channels/"+id+"/plan", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &p)
	return p.Revision, p.Source
}

// replaceAs makes the plan read text, as a change by who, through the room
// (as the Planner's edit_plan and MCP's update_document do).
func (ta *testApp) replaceAs(t *testing.T, id string, who room.Author, text string) {
	t.Helper()
	ctx := context.Background()
	ch, err := ta.app.store.Channel(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	err = ta.app.hub.Do(ctx, ta.app.roomChannel(ch), func(r *room.Room) error {
		rev, _ := r.Source()
		_, err := r.ReplaceText(room.WithAuthor(ctx, who), rev, text)
		return err
	})
	if err != nil {
		t.Fatalf("replace as %+v: %v", who, err)
	}
}

// timelinePages reads the whole timeline, limit sessions a page.
func (ta *testApp) timelinePages(t *testing.T, id string, limit int) (all []timelineSession, nexts []int64) {
	t.Helper()
	path := fmt.Sprintf("/api/channels/%s/timeline?limit=%d", id, limit)
	for {
		var page timelineJSON
		r := ta.Do("GET", path, nil)
		apptest.Want(t, r, 200, "")
		r.JSON(t, &page)
		all = append(all, page.Sessions...)
		if page.Next == nil {
			return all, nexts
		}
		if len(page.Sessions) != limit {
			t.Fatalf("a page with a next page holds %d sessions, not %d", len(page.Sessions), limit)
		}
		nexts = append(nexts, *page.Next)
		path = fmt.Sprintf("/api/channels/%s/timeline?limit=%d&before=%d", id, limit, *page.Next)
	}
}

// TestTimelineSessions: versions are grouped into sessions of work (a
// person's burst of typing, split by a pause; one Planner turn; a run of an
// MCP client's updates; each restore alone), newest first, each with its
// summary; pages follow one another through next; a comment thread and a
// decision show on the session that was the plan's newest when they were
// made.
func TestTimelineSessions(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Timeline")
	tab := ta.DialRoom(ch.ID)
	tab.OpenPlan()

	// The versions' times are set by hand: the first ones in the past, the
	// thread started at the real time, the rest after it.
	var now time.Time
	ta.app.store.SetClock(func() time.Time { return now })
	past, later := time.Now().Add(-2*time.Hour), time.Now().Add(time.Hour)
	typeAt := func(at time.Time, s string) {
		now = at
		rev, text := ta.planNow(t, ch.ID)
		tabPush(t, tab, rev, insertAt(len(text), len(text), s))
	}
	replaceAt := func(at time.Time, who room.Author, s string) {
		now = at
		_, text := ta.planNow(t, ch.ID)
		ta.replaceAs(t, ch.ID, who, text+s)
	}
	typeAt(past.Add(1*time.Minute), "\n## Goals\n") // 1
	typeAt(past.Add(2*time.Minute), "\nShip it.\n") // 2
	typeAt(past.Add(6*time.Minute), "\nSoon.\n")    // 3: 4 minutes on, the same burst
	typeAt(past.Add(20*time.Minute), "\nLater.\n")  // 4: after a pause
	typeAt(past.Add(21*time.Minute), "\nMore.\n")   // 5

	// A thread started now, on version 5.
	_, text := ta.planNow(t, ch.ID)
	body := newThreadFor(t, text, 5, "Later.", "Why later?")
	delete(body, "type")
	delete(body, "id")
	var th room.Thread
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/comments", body)
	apptest.Want(t, r, 201, "")
	r.JSON(t, &th)

	planner := func(turn string) room.Author {
		return room.Author{Kind: room.AuthorPlanner, Turn: turn, Model: "qwen2.5"}
	}
	replaceAt(later.Add(1*time.Minute), planner("t1"), "\n## Risks\n")     // 6
	replaceAt(later.Add(30*time.Minute), planner("t1"), "\nNone known.\n") // 7: the same turn, however long it took
	replaceAt(later.Add(31*time.Minute), planner("t2"), "\nOne.\n")        // 8
	now = later.Add(32 * time.Minute)
	cs := ta.mcpSession("codex")
	_, text = ta.planNow(t, ch.ID)
	wantOK(t, callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": 8, "plan": text + "\nBy MCP.\n", "idempotencyKey": "k1"}), "update_document") // 9
	now = later.Add(33 * time.Minute)
	wantOK(t, callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": 9, "plan": text + "\nBy MCP, twice.\n", "idempotencyKey": "k2"}), "update_document") // 10
	now = later.Add(34 * time.Minute)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/2/restore", nil), 200, "") // 11
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/3/restore", nil), 200, "") // 12
	typeAt(later.Add(35*time.Minute), "\nAgain.\n")                                            // 13

	// A decision asked during the Planner's first turn, decided during the
	// MCP client's updates.
	call, _ := room.QuestionCall{Method: room.MethodConfirm, Title: "Ship on Friday?"}.MarshalJSON()
	err := ta.app.store.SaveDecisions(context.Background(), ch.ID, []store.Decision{{ID: "d1", ChannelID: ch.ID, Request: "q1",
		Call: call, Status: "decided", Answer: json.RawMessage(`{"confirmed":true}`), AnsweredBy: "ada",
		CreatedAt: later.Add(2 * time.Minute).UnixMilli(), UpdatedAt: later.Add(32*time.Minute + time.Second).UnixMilli()}}, nil)
	if err != nil {
		t.Fatal(err)
	}

	all, nexts := ta.timelinePages(t, ch.ID, 4)
	type row struct {
		from, to int64
		kind     string
		name     string
		turn     string
		n        int
	}
	var got []row
	for _, s := range all {
		got = append(got, row{s.From, s.To, s.Author.Kind, s.Author.Name, s.Author.Turn, s.Versions})
	}
	want := []row{
		{13, 13, "person", "ada", "", 1},
		{12, 12, "restore", "ada", "", 1},
		{11, 11, "restore", "ada", "", 1},
		{9, 10, "mcp", "codex", "", 2},
		{8, 8, "planner", "", "t2", 1},
		{6, 7, "planner", "", "t1", 2},
		{4, 5, "person", "ada", "", 2},
		{1, 3, "person", "ada", "", 3},
		{0, 0, "server", "", "", 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sessions\n%v\nwant\n%v", got, want)
	}
	if fmt.Sprint(nexts) != "[9 1]" {
		t.Errorf("pages' next %v, want [9 1]", nexts)
	}
	if s := all[7]; s.Summary != "added 3 blocks, under “Goals”" || s.Start != past.Add(time.Minute).UnixMilli() || s.End != past.Add(6*time.Minute).UnixMilli() {
		t.Errorf("the first burst: %+v", s)
	}
	if s := all[5]; s.Summary != "added 2 blocks, under “Risks”" || s.Author.Model != "qwen2.5" {
		t.Errorf("the first turn: %+v", s)
	}
	if s := all[8]; s.Summary != "the earliest version kept" {
		t.Errorf("the first version: %+v", s)
	}

	// Events: the thread on the burst it was started after; the decision
	// asked in the first turn, decided in the MCP client's run.
	events := map[int64][]string{}
	for _, s := range all {
		for _, e := range s.Events {
			events[s.From] = append(events[s.From], fmt.Sprintf("%s %s %s v%d %q %s", e.Kind, e.ID, e.Action, e.Version, e.Text, e.Status))
		}
	}
	wantEvents := map[int64][]string{
		4: {fmt.Sprintf("thread %s started v5 %q open", th.ID, "Later.")},
		6: {`decision d1 asked v6 "Ship on Friday?" decided`},
		9: {`decision d1 decided v9 "Ship on Friday?" decided`},
	}
	if fmt.Sprint(events) != fmt.Sprint(wantEvents) {
		t.Errorf("events\n%v\nwant\n%v", events, wantEvents)
	}
	for _, s := range all {
		if s.Events == nil {
			t.Errorf("session %d has events null, not []", s.From)
		}
	}

	// One page holds them all the same.
	var one timelineJSON
	ta.Do("GET", "/api/channels/"+ch.ID+"/timeline", nil).JSON(t, &one)
	if a, b := toJSON(one.Sessions), toJSON(all); a != b || one.Next != nil {
		t.Errorf("one page\n%s\nthe pages\n%s", a, b)
	}
	// A page from the middle of a session holds what is before it.
	var mid timelineJSON
	ta.Do("GET", "/api/channels/"+ch.ID+"/timeline?before=3&limit=1", nil).JSON(t, &mid)
	if len(mid.Sessions) != 1 || mid.Sessions[0].From != 1 || mid.Sessions[0].To != 2 || mid.Next == nil || *mid.Next != 1 {
		t.Errorf("before=3: %+v", mid)
	}
}

func TestTimelineRefusals(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Refused")
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "before=0", "before=-3", "before=v2"} {
		r := ta.Do("GET", "/api/channels/"+ch.ID+"/timeline?"+q, nil)
		apptest.Want(t, r, 400, "invalid-argument")
	}
	apptest.Want(t, ta.Do("GET", "/api/channels/00000000-0000-4000-8000-000000000000/timeline", nil), 404, "")
}

// diffJSON is GET …/diff.
type diffJSON struct {
	From    int64              `json:"from"`
	To      int64              `json:"to"`
	Summary string             `json:"summary"`
	Blocks  []room.BlockChange `json:"blocks"`
}

// TestDiffRoute: a diff of two versions, and of one and the plan now, by
// block, with the changed words marked; refusals of bad and unknown
// versions.
func TestDiffRoute(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Diff")
	v1 := ta.putPlan(t, ch.ID, 0, "# Diff\n\n## Goals\n\nShip the fast path first.\n\nKeep this.\n\n## Risks\n\nGone soon.\n")
	v2 := ta.putPlan(t, ch.ID, v1, "# Diff\n\n## Goals\n\nShip the slow path first.\n\nKeep this.\n\nA new line.\n\n## Risks\n")
	v3 := ta.putPlan(t, ch.ID, v2, "# Diff\n\n## Goals\n\nShip the slow path first.\n\nKeep this.\n\nA new line.\n\n## Risks\n\nNone.\n")

	wantBlocks := `[{"op":"same","text":"# Diff"},{"op":"same","text":"## Goals"},` +
		`{"op":"changed","heading":"Goals","old":"Ship the fast path first.","new":"Ship the slow path first.",` +
		`"words":[{"op":"same","text":"Ship the "},{"op":"removed","text":"fast"},{"op":"added","text":"slow"},{"op":"same","text":" path first."}]},` +
		`{"op":"same","text":"Keep this."},{"op":"added","heading":"Goals","text":"A new line."},{"op":"same","text":"## Risks"},` +
		`{"op":"removed","heading":"Risks","text":"Gone soon."}]`
	var d diffJSON
	r := ta.Do("GET", fmt.Sprintf("/api/channels/%s/diff?from=%d&to=%d", ch.ID, v1, v2), nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &d)
	if d.From != v1 || d.To != v2 || toJSON(d.Blocks) != wantBlocks || d.Summary != "changed 1 block, added 1 and removed 1, under “Goals” and “Risks”" {
		t.Fatalf("diff %d→%d: %s", v1, v2, r.Body)
	}
	// Against now: to is the plan's revision.
	r = ta.Do("GET", fmt.Sprintf("/api/channels/%s/diff?from=%d", ch.ID, v2), nil)
	apptest.Want(t, r, 200, "")
	d = diffJSON{}
	r.JSON(t, &d)
	if d.To != v3 || len(d.Blocks) != 7 || d.Blocks[6].Op != "added" || d.Blocks[6].Text != "None." || d.Blocks[6].Heading != "Risks" {
		t.Fatalf("diff %d→now: %s", v2, r.Body)
	}

	for _, c := range []struct{ q, code string }{
		{"", "invalid-argument"},
		{"to=1", "invalid-argument"},
		{"from=x", "invalid-version"},
		{"from=-1", "invalid-version"},
		{"from=1&to=y", "invalid-version"},
	} {
		r := ta.Do("GET", "/api/channels/"+ch.ID+"/diff?"+c.q, nil)
		apptest.Want(t, r, 400, c.code)
	}
	for _, q := range []string{"from=99", "from=1&to=99"} {
		r := ta.Do("GET", "/api/channels/"+ch.ID+"/diff?"+q, nil)
		apptest.Want(t, r, 404, "version-not-found")
		if !strings.Contains(string(r.Body), "version 99") {
			t.Errorf("%s: %s", q, r.Body)
		}
	}
}
