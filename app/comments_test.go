package app

// Comment threads against the real app: a thread started and answered over
// room sockets, its anchor moved by edits pushed through the socket, kept
// over a restart, refused on an archived document, gone with a deleted one;
// Accept with no Planner and with chopin planner on a fake model.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

const commentPlan = "# Launch\n\nWe ship the rocket in May.\n\nUse Postgres for everything, and keep backups daily.\n\n## Risks\n\nNone yet.\n"

// newThreadFor is a comment:start body for quote in source at version.
func newThreadFor(t *testing.T, source string, version int64, quote, text string) map[string]any {
	t.Helper()
	i := strings.Index(source, quote)
	if i < 0 {
		t.Fatalf("%q not in the plan", quote)
	}
	from := room.UTF16Len(source[:i])
	line := strings.Count(source[:i], "\n") + 1
	var refs []room.BlockRef
	for _, b := range room.Blocks(source) {
		if b.StartLine <= line && line <= b.EndLine {
			refs = append(refs, room.BlockRef{Index: b.Index, Digest: b.Digest})
		}
	}
	return map[string]any{"type": "comment:start", "id": "s1", "version": version, "blocks": refs,
		"from": from, "to": from + room.UTF16Len(quote), "quote": quote, "text": text}
}

func (ta *testApp) threads(t *testing.T, id string) room.CommentSync {
	t.Helper()
	var cs room.CommentSync
	ta.Do("GET", "/api/channels/"+id+"/comments", nil).JSON(t, &cs)
	return cs
}

func TestCommentThreadsLiveAndDurable(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	rev := ta.putPlan(t, ch.ID, 0, commentPlan)
	a, b := ta.DialRoom(ch.ID), ta.DialRoom(ch.ID)
	if s := b.Until("comment:sync"); len(s["threads"].([]any)) != 0 {
		t.Fatalf("sync on join %v", s)
	}

	// A digest that does not match the server's text is refused.
	bad := newThreadFor(t, commentPlan, rev, "Postgres for everything", "Why Postgres?")
	bad["blocks"] = []room.BlockRef{{Index: 2, Digest: room.Digest("Use MySQL for everything, and keep backups daily.")}}
	a.Send(bad)
	if e := a.Until("error"); e["code"] != "invalid-passage" || e["id"] != "s1" {
		t.Errorf("wrong digest: %v", e)
	}
	// So is a quote the text does not have there, and a stale version.
	bad = newThreadFor(t, commentPlan, rev, "Postgres for everything", "Why Postgres?")
	bad["quote"] = "MySQL for everything!!"
	a.Send(bad)
	if e := a.Until("error"); e["code"] != "invalid-passage" {
		t.Errorf("wrong quote: %v", e)
	}
	bad = newThreadFor(t, commentPlan, rev-1, "Postgres for everything", "Why Postgres?")
	a.Send(bad)
	if e := a.Until("error"); e["code"] != "stale-version" {
		t.Errorf("stale version: %v", e)
	}
	big := newThreadFor(t, commentPlan, rev, "Postgres for everything", strings.Repeat("x", room.MaxCommentNoteBytes+1))
	a.Send(big)
	if e := a.Until("error"); e["code"] != "comment-too-large" {
		t.Errorf("a note over the bound: %v", e)
	}

	a.Send(newThreadFor(t, commentPlan, rev, "Postgres for everything", "Why Postgres?"))
	started := a.Until("comment:started")
	id, _ := started["thread"].(string)
	th := b.Until("comment:thread")["thread"].(map[string]any)
	if th["id"] != id || th["status"] != "open" || th["notes"].([]any)[0].(map[string]any)["text"] != "Why Postgres?" {
		t.Fatalf("the other tab saw %v", th)
	}

	// Typing is relayed, never stored; a reply reaches both tabs.
	b.Send(map[string]any{"type": "comment:typing", "thread": id})
	if ty := a.Until("comment:typing"); ty["thread"] != id || ty["login"] != "ada" {
		t.Errorf("typing %v", ty)
	}
	b.Send(map[string]any{"type": "comment:reply", "id": "r1", "thread": id, "text": "SQLite would do."})
	if th := a.Until("comment:thread")["thread"].(map[string]any); len(th["notes"].([]any)) != 2 {
		t.Errorf("reply %v", th)
	}

	// Random edits pushed through the socket, around and inside the passage:
	// the anchor covers what is left of it and nothing from outside it.
	quote := "Postgres for everything"
	qFrom := strings.Index(commentPlan, quote)
	var model []taggedRune
	for i, r := range commentPlan {
		model = append(model, taggedRune{r, i})
	}
	rng := rand.New(rand.NewPCG(7, 19))
	words := []string{"x", "é", " new", "\n", "Postgres", ""}
	version := rev
	for step := 0; step < 300; step++ {
		n := len(model)
		cur := ta.threads(t, ch.ID).Threads[0].Passage
		at := rng.IntN(n + 1)
		if cur.State != room.AnchorOrphaned && rng.IntN(3) > 0 {
			at = max(0, min(n, cur.From-2+rng.IntN(cur.To-cur.From+5)))
		}
		del := 0
		if n-at > 1 && rng.IntN(2) == 0 {
			del = 1 + rng.IntN(min(n-at-1, 6))
		}
		ins := words[rng.IntN(len(words))]
		if del == 0 && ins == "" {
			ins = "y"
		}
		var added []taggedRune
		for _, r := range ins {
			added = append(added, taggedRune{r, -1})
		}
		changes := changeSetJSON(n, at, del, ins)
		model = append(append(append([]taggedRune{}, model[:at]...), added...), model[at+del:]...)
		a.Send(map[string]any{"type": "plan:push", "id": "p", "version": version,
			"updates": []map[string]any{{"clientID": "tester", "changes": json.RawMessage(changes)}}})
		ack := a.Until("plan:ack")
		version = int64(ack["version"].(float64))
		p := ta.threads(t, ch.ID).Threads[0].Passage
		checkTagged(t, step, model, p, qFrom, qFrom+len(quote), quote)
		if t.Failed() {
			return
		}
	}
	before := ta.threads(t, ch.ID)

	// A restart keeps the threads, the anchor where the edits left it.
	cfg := ta.app.cfg
	ta.Stop()
	ta = startAppWith(t, cfg)
	after := ta.threads(t, ch.ID)
	if len(after.Threads) != 1 || after.Version != before.Version ||
		!passageEqual(after.Threads[0].Passage, before.Threads[0].Passage) ||
		len(after.Threads[0].Notes) != 2 {
		t.Errorf("after a restart\n%+v\nnot\n%+v", after, before)
	}

	// Archived: every comment mutation is refused; restored, they work.
	ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil)
	for _, r := range []apptest.Response{
		ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+id+"/reply", map[string]any{"text": "more"}),
		ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+id+"/accept", nil),
		ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+id+"/dismiss", nil),
	} {
		apptest.Want(t, r, 409, "document-archived")
	}
	c := ta.DialRoom(ch.ID)
	c.Send(map[string]any{"type": "comment:reply", "id": "r2", "thread": id, "text": "more"})
	if e := c.Until("error"); e["code"] != "read-only" && e["code"] != "document-archived" {
		t.Errorf("reply on archived: %v", e)
	}
	ta.Do("POST", "/api/channels/"+ch.ID+"/restore", nil)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+id+"/dismiss", nil), 200, "")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+id+"/reply", map[string]any{"text": "more"}), 409, "thread-closed")

	// Deleting the document deletes its threads.
	ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil)
	apptest.Want(t, ta.Do("DELETE", "/api/channels/"+ch.ID, nil), 204, "")
	if ts, err := ta.app.store.CommentThreads(context.Background(), ch.ID); err != nil || len(ts) != 0 {
		t.Errorf("after delete: %v %v", ts, err)
	}
}

func passageEqual(a, b room.Passage) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

type taggedRune struct {
	r      rune
	origin int // byte index in the starting text, or -1 for typed since
}

// changeSetJSON is the CodeMirror JSON of deleting [at, at+del) and
// inserting ins there, in a document of n units (BMP runes only).
func changeSetJSON(n, at, del int, ins string) []byte {
	var secs []any
	if at > 0 {
		secs = append(secs, at)
	}
	rep := []any{del}
	if ins != "" {
		for _, l := range strings.Split(ins, "\n") {
			rep = append(rep, l)
		}
	}
	secs = append(secs, rep)
	if rest := n - at - del; rest > 0 {
		secs = append(secs, rest)
	}
	b, _ := json.Marshal(secs)
	return b
}

func checkTagged(t *testing.T, step int, model []taggedRune, p room.Passage, qFrom, qTo int, quote string) {
	t.Helper()
	in := func(c taggedRune) bool { return c.origin >= qFrom && c.origin < qTo }
	first, last := -1, -1
	for i, c := range model {
		if in(c) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if p.State == room.AnchorOrphaned {
		if first >= 0 {
			t.Errorf("step %d: orphaned with the passage partly left", step)
		}
		return
	}
	if p.From < 0 || p.To > len(model) || p.From >= p.To {
		t.Fatalf("step %d: anchor %d-%d in %d units", step, p.From, p.To, len(model))
	}
	var got strings.Builder
	for i := p.From; i < p.To; i++ {
		got.WriteRune(model[i].r)
		if model[i].origin >= 0 && !in(model[i]) {
			t.Errorf("step %d: the anchor covers %q from outside the passage", step, model[i].r)
		}
	}
	if first >= 0 && (first < p.From || last >= p.To) {
		t.Errorf("step %d: the anchor %d-%d leaves out passage text at %d-%d", step, p.From, p.To, first, last)
	}
	if (got.String() == quote) != (p.State == room.AnchorExact) {
		t.Errorf("step %d: state %s, anchor reads %q", step, p.State, got.String())
	}
	if p.State != room.AnchorOrphaned && (p.StartLine == 0 || p.EndLine < p.StartLine) {
		t.Errorf("step %d: lines %d-%d", step, p.StartLine, p.EndLine)
	}
}

// TestCommentAcceptWithoutPlanner: the decision is recorded in the plan,
// and the thread says nobody will revise it until a Planner attaches.
func TestCommentAcceptWithoutPlanner(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	rev := ta.putPlan(t, ch.ID, 0, commentPlan)
	body := newThreadFor(t, commentPlan, rev, "Postgres for everything", "Why Postgres?")
	delete(body, "type")
	delete(body, "id")
	var th room.Thread
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/comments", body)
	apptest.Want(t, r, 201, "")
	r.JSON(t, &th)
	r = ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+th.ID+"/accept", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &th)
	if th.Status != room.ThreadAccepted || th.DecidedBy != "ada" || th.Result == nil || th.Result.State != room.ResultNoPlan ||
		!strings.Contains(th.Result.Message, "nobody will revise this passage until a Planner attaches") {
		t.Errorf("accepted %+v %+v", th, th.Result)
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	want := "Use Postgres for everything, and keep backups daily.\n\n<Comment id=\"" + th.ID + "\" />\n\n## Risks"
	if !strings.Contains(plan.Source, want) {
		t.Errorf("the record is not after the passage:\n%s", plan.Source)
	}
	// An exported file writes the record out, so it reads on its own.
	md := ta.Do("GET", "/api/channels/"+ch.ID+"/plan.md?decisions=inline", nil)
	if !strings.Contains(string(md.Body), "keep backups daily.\n\n> **Accepted comment** (@ada) on: Postgres for everything\n>\n> @ada: Why Postgres?\n\n## Risks") {
		t.Errorf("inline export:\n%s", md.Body)
	}
	// The record is the server's: an edit may not remove it.
	r = ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": plan.Revision, "source": commentPlan})
	apptest.Want(t, r, 400, "reserved-component")
	// Nothing was sent to anyone, and the thread takes no more notes.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/comments/"+th.ID+"/reply", map[string]any{"text": "x"}), 409, "thread-closed")
}

// commentModel is a fake model that revises the passage the accepted
// comment names: it reads the plan, replaces the block holding the quote,
// and answers.
type commentModel struct {
	ts     *httptest.Server
	mu     sync.Mutex
	prompt string
}

func newCommentModel(t *testing.T, quote, revised string) *commentModel {
	f := &commentModel{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		raw := new(bytes.Buffer)
		raw.ReadFrom(r.Body)
		if answerDescription(w, raw.Bytes()) {
			return
		}
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		json.Unmarshal(raw.Bytes(), &req)
		var tools []string
		for _, m := range req.Messages {
			switch m.Role {
			case "tool":
				tools = append(tools, m.Content)
			case "user":
				f.mu.Lock()
				f.prompt = m.Content
				f.mu.Unlock()
			}
		}
		chunk := func(delta string) string {
			return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
		}
		finish := func(reason string) string {
			return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
		}
		var events []string
		switch len(tools) {
		case 0:
			events = []string{chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_plan","arguments":"{}"}}]}`), finish("tool_calls")}
		case 1:
			var page string
			json.Unmarshal([]byte(tools[0]), &page)
			if page == "" {
				page = tools[0]
			}
			rev := "0"
			if m := revisionLine.FindStringSubmatch(page); m != nil {
				rev = m[1]
			}
			// The block whose lines hold the quote, from the outline.
			index := -1
			lines := strings.Split(page[strings.Index(page, "text:\n")+6:], "\n")
			for _, l := range strings.Split(page, "\n") {
				var i, s, e int
				var typ, digest string
				if n, _ := fmt.Sscanf(l, "%d %s %d-%d %s", &i, &typ, &s, &e, &digest); n == 5 {
					for k := s; k <= e && k <= len(lines); k++ {
						if strings.Contains(lines[k-1], quote) {
							index = i
						}
					}
				}
			}
			args, _ := json.Marshal(fmt.Sprintf(`{"revision":%s,"operations":[{"op":"replace","index":%d,"content":%q}]}`, rev, index, revised))
			events = []string{chunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"edit_plan","arguments":` + string(args) + `}}]}`), finish("tool_calls")}
		default:
			events = []string{chunk(`{"content":"Revised the passage."}`), finish("stop")}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range append(events, "[DONE]") {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
	})
	f.ts = httptest.NewServer(mux)
	t.Cleanup(f.ts.Close)
	return f
}

// TestCommentAcceptRevisesWithPlanner: Accept records the decision and
// starts a Planner turn naming the passage and the notes; the blocks the
// Planner writes in it become the thread's result.
func TestCommentAcceptRevisesWithPlanner(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	rev := ta.putPlan(t, ch.ID, 0, commentPlan)
	browser := ta.DialRoom(ch.ID)
	const revised = "Use SQLite for everything, and keep backups daily."
	model := newCommentModel(t, "Postgres for everything", revised)
	cli := runPlanner(t, ta.plannerEnv(&fakeModelServer{ts: model.ts}), ta.app.URL()+ch.URL, "--model", "qwen2.5")
	defer func() { cli.cancel(); cli.wait(t) }()
	for {
		st := browser.Until("planner:status")["planner"].(map[string]any)
		if st["state"] == "attached" {
			break
		}
	}

	browser.Send(newThreadFor(t, commentPlan, rev, "Postgres for everything", "Why Postgres? One file is enough."))
	id := browser.Until("comment:started")["thread"].(string)
	browser.Send(map[string]any{"type": "comment:reply", "id": "r", "thread": id, "text": "Agreed, SQLite."})
	browser.Until("ok")
	browser.Send(map[string]any{"type": "comment:accept", "id": "a", "thread": id})
	var th map[string]any
	for {
		m := browser.Until("comment:thread")["thread"].(map[string]any)
		if m["id"] == id && m["result"] != nil && m["result"].(map[string]any)["state"] != "revising" {
			th = m
			break
		}
	}
	res := th["result"].(map[string]any)
	if th["status"] != "accepted" || res["state"] != "revised" || res["blocks"] != revised {
		t.Errorf("result %v", th)
	}
	model.mu.Lock()
	prompt := model.prompt
	model.mu.Unlock()
	for _, want := range []string{"revise exactly this passage", "lines 5-5", "> Postgres for everything",
		"@ada: Why Postgres? One file is enough.", "@ada: Agreed, SQLite."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if !strings.Contains(plan.Source, revised+"\n\n<Comment id=\""+id+"\" />\n") {
		t.Errorf("plan after the revision:\n%s", plan.Source)
	}
	// edit_plan moved the anchor as any change does: the Planner replaced
	// the passage's block, so the passage now covers the whole new block
	// and says its text changed.
	var cs room.CommentSync
	ta.Do("GET", "/api/channels/"+ch.ID+"/comments", nil).JSON(t, &cs)
	if p := cs.Threads[0].Passage; p.State != room.AnchorChanged || plan.Source[p.From:p.To] != revised {
		t.Errorf("after the revision the passage is %+v, reading %q", p, plan.Source[p.From:p.To])
	}
	// read_plan lists the thread, acted on.
	page, err := room.ReadPlan(ta.app.hubView(t, ch.ID), room.ReadPlanArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.Text(), id+" accepted") || !strings.Contains(page.Text(), "revised by the Planner") {
		t.Errorf("read_plan:\n%s", page.Text())
	}
}

// hubView is the document's PlanView as the Planner's read_plan gets it.
func (a *App) hubView(t *testing.T, id string) room.PlanView {
	t.Helper()
	ch, err := a.store.Channel(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var view room.PlanView
	if err := a.hub.Do(context.Background(), a.roomChannel(ch), func(r *room.Room) error { view = r.View(); return nil }); err != nil {
		t.Fatal(err)
	}
	return view
}
