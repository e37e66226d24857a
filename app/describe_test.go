package app

// Generated descriptions end to end (spec/channels.md "Generated
// descriptions"): the real app on port 0 with its SQLite file, and a test
// Planner attached through agentconn/client that answers isolated turns.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/config"
)

// describingPlanner answers isolated turns: a chunk's turn with answer(its
// material), a reduction's with "(a b)".
type describingPlanner struct {
	ta *testApp

	mu     sync.Mutex
	turns  []wire.Turn
	modes  []string
	answer func(material string) string // the turn's text
	gate   chan struct{}                // when set, a turn waits for it
	link   *client.Link
}

var materialRE = regexp.MustCompile(`(?s)<material>\n(.*)\n</material>`)
var pairTurnRE = regexp.MustCompile(`(?s)<material>\n1\. (.*)\n2\. (.*)\n</material>`)

func descriptionJSON(d string) string {
	b, _ := json.Marshal(map[string]string{"description": d})
	return string(b)
}

func (p *describingPlanner) turn(ctx context.Context, t *client.Turn) error {
	p.mu.Lock()
	p.turns = append(p.turns, t.Message)
	p.modes = append(p.modes, t.Session.Mode)
	gate, answer := p.gate, p.answer
	p.mu.Unlock()
	if t.Session.Mode != wire.ModeIsolated {
		return t.Text("A Chat reply.")
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if m := pairTurnRE.FindStringSubmatch(t.Message.Prompt); m != nil {
		return t.Text(descriptionJSON("(" + m[1] + " " + m[2] + ")"))
	}
	m := materialRE.FindStringSubmatch(t.Message.Prompt)
	if m == nil {
		return errors.New("no material in the prompt")
	}
	return t.Text(answer(m[1]))
}

func (p *describingPlanner) set(answer func(string) string, gate chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer, p.gate = answer, gate
}

func (p *describingPlanner) seen() []wire.Turn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]wire.Turn(nil), p.turns...)
}

func attachDescriber(t *testing.T, ta *testApp, channelID string, answer func(string) string) *describingPlanner {
	t.Helper()
	p := &describingPlanner{ta: ta, answer: answer}
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: channelID,
		Handler: client.Handler{Turn: p.turn}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p.link = l
	return p
}

// describeByFirstLine describes a chunk by its first line.
func describeByFirstLine(material string) string {
	first, _, _ := strings.Cut(material, "\n")
	return descriptionJSON("Plan for " + strings.TrimPrefix(first, "# "))
}

func describeConfig(t *testing.T, debounce time.Duration) config.Config {
	cfg := testConfig(t, t.TempDir())
	cfg.DescriptionDebounce = debounce
	cfg.JobBackoff = time.Millisecond
	return cfg
}

// eventually polls until ok; it measures nothing.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type jobsJSON struct {
	Jobs []jobView `json:"jobs"`
}

func (ta *testApp) jobs(t *testing.T, channelID string) []jobView {
	t.Helper()
	var out jobsJSON
	r := ta.Do("GET", "/api/channels/"+channelID+"/jobs", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &out)
	return out.Jobs
}

func (ta *testApp) channelNow(t *testing.T, id string) channelJSON {
	t.Helper()
	var ch channelJSON
	ta.Do("GET", "/api/channels/"+id, nil).JSON(t, &ch)
	return ch
}

func (ta *testApp) putPlan(t *testing.T, id string, revision int64, source string) int64 {
	t.Helper()
	r := ta.Do("PUT", "/api/channels/"+id+"/plan", map[string]any{"revision": revision, "source": source})
	apptest.Want(t, r, 200, "")
	var plan struct{ Revision int64 }
	r.JSON(t, &plan)
	return plan.Revision
}

func (ta *testApp) list(t *testing.T, query string) []channelJSON {
	t.Helper()
	var page struct{ Channels []channelJSON }
	ta.Do("GET", "/api/repositories/octo/plans/channels?query="+url.QueryEscape(query), nil).JSON(t, &page)
	return page.Channels
}

func descriptionOf(ch channelJSON) string {
	if ch.Description == nil {
		return ""
	}
	return *ch.Description
}

func TestDescriptionFollowsEdits(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 50*time.Millisecond))
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Storage")
	p := attachDescriber(t, ta, ch.ID, describeByFirstLine)
	before := ta.channelNow(t, ch.ID)

	rev := ta.putPlan(t, ch.ID, 0, "# Moving storage to SQLite\n\nOne file, WAL mode.\n")
	eventually(t, "the first description", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Moving storage to SQLite"
	})
	got := ta.channelNow(t, ch.ID)
	if got.UpdatedAt != before.UpdatedAt || got.DescriptionRevision != 1 {
		t.Errorf("updatedAt %s -> %s, descriptionRevision %d: a description must not touch updatedAt", before.UpdatedAt, got.UpdatedAt, got.DescriptionRevision)
	}
	if hits := ta.list(t, "sqlite"); len(hits) != 1 || descriptionOf(hits[0]) != "Plan for Moving storage to SQLite" {
		t.Errorf("search by description: %+v", hits)
	}
	var plan struct{ Revision int64 }
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Revision != rev {
		t.Errorf("plan revision %d after the description, want %d", plan.Revision, rev)
	}

	ta.putPlan(t, ch.ID, rev, "# Replicating to Postgres\n\nLater.\n")
	eventually(t, "the second description", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Replicating to Postgres"
	})
	if got := ta.channelNow(t, ch.ID); got.DescriptionRevision != 2 || got.UpdatedAt != before.UpdatedAt {
		t.Errorf("after the second: %+v", got)
	}
	if hits := ta.list(t, "sqlite"); len(hits) != 0 {
		t.Errorf("the old description still matches: %+v", hits)
	}
	if hits := ta.list(t, "postgres"); len(hits) != 1 {
		t.Errorf("the new description does not match: %+v", hits)
	}

	turns := p.seen()
	if len(turns) != 2 {
		t.Fatalf("%d turns, want one per edit", len(turns))
	}
	for i, turn := range turns {
		rf := turn.ResponseFormat
		if p.modes[i] != wire.ModeIsolated || turn.Tools == nil || len(turn.Tools) != 0 || rf == nil || rf.Type != "json" || !strings.Contains(string(rf.Schema), `"description"`) {
			t.Errorf("turn %d: mode %s, tools %v, responseFormat %+v", i, p.modes[i], turn.Tools, rf)
		}
	}
	jobs := ta.jobs(t, ch.ID)
	if len(jobs) != 2 || jobs[0].State != "completed" || jobs[0].Type != "document-summary@1" || jobs[0].Attempts != 1 {
		t.Errorf("jobs = %+v", jobs)
	}
}

func TestDescriptionWaitsForAPlanner(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 0))
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Storage")
	rc := ta.DialRoom(ch.ID)
	ta.putPlan(t, ch.ID, 0, "# Storage\n\nOne file.\n")
	eventually(t, "a paused job", func() bool {
		js := ta.jobs(t, ch.ID)
		return len(js) > 0 && js[0].State == "paused" && js[0].Reason == "planner-unavailable"
	})
	for { // the room's socket carries the same
		f := rc.Until("jobs:state")
		js, _ := f["jobs"].([]any)
		if len(js) > 0 && js[0].(map[string]any)["state"] == "paused" {
			if js[0].(map[string]any)["reason"] != "planner-unavailable" {
				t.Errorf("jobs:state = %v", f)
			}
			break
		}
	}
	attachDescriber(t, ta, ch.ID, describeByFirstLine)
	eventually(t, "the description once a Planner attached", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Storage"
	})
	if js := ta.jobs(t, ch.ID); js[0].State != "completed" || js[0].Attempts != 1 {
		t.Errorf("jobs = %+v", js)
	}
}

func TestDescriptionRetriesThenFailsAndKeepsTheOld(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 0))
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Storage")
	p := attachDescriber(t, ta, ch.ID, describeByFirstLine)
	rev := ta.putPlan(t, ch.ID, 0, "# Storage\n\nOne file.\n")
	eventually(t, "the first description", func() bool { return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Storage" })

	p.set(func(string) string { return "Plan for storage, not as JSON" }, nil)
	ta.putPlan(t, ch.ID, rev, "# Storage and backups\n")
	eventually(t, "a failed job", func() bool {
		js := ta.jobs(t, ch.ID)
		return len(js) > 0 && js[0].State == "failed"
	})
	js := ta.jobs(t, ch.ID)
	if js[0].Attempts != 2 || js[0].Failures != 2 || js[0].Reason != "invalid-output" {
		t.Errorf("failed job = %+v", js[0])
	}
	if n := len(p.seen()); n != 1+4 { // 2 attempts, each asked twice
		t.Errorf("%d turns, want 5", n)
	}
	if got := ta.channelNow(t, ch.ID); descriptionOf(got) != "Plan for Storage" || got.DescriptionRevision != 1 {
		t.Errorf("the old description did not stay: %+v", got)
	}
	if hits := ta.list(t, "plan for storage"); len(hits) != 1 {
		t.Errorf("the old description is not searchable: %+v", hits)
	}
}

func TestDescriptionOfAChangedDocumentIsStaleAndRedone(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 10*time.Minute)) // edits schedule nothing during the test
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Storage")
	gate := make(chan struct{})
	p := attachDescriber(t, ta, ch.ID, describeByFirstLine)
	p.set(describeByFirstLine, gate)
	rev := ta.putPlan(t, ch.ID, 0, "# First\n")
	ta.DialRoom(ch.ID) // opening the document ensures a job for revision 1
	eventually(t, "the turn for the first revision", func() bool { return len(p.seen()) == 1 })
	ta.putPlan(t, ch.ID, rev, "# Second\n")
	close(gate)
	eventually(t, "the description of the second revision", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Second"
	})
	js := ta.jobs(t, ch.ID)
	if len(js) != 2 || js[1].State != "superseded" || js[1].Reason != "stale" || js[0].State != "completed" {
		t.Errorf("jobs = %+v", js)
	}
	if got := ta.channelNow(t, ch.ID); got.DescriptionRevision != 1 {
		t.Errorf("the stale output was projected: %+v", got)
	}
}

func TestDescriptionJobResumesAfterRelaunch(t *testing.T) {
	cfg := describeConfig(t, 0)
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Storage")
	p := attachDescriber(t, ta, ch.ID, describeByFirstLine)
	p.set(describeByFirstLine, make(chan struct{})) // never answers
	ta.putPlan(t, ch.ID, 0, "# Storage\n\nOne file.\n")
	eventually(t, "a turn under way", func() bool { return len(p.seen()) == 1 })
	first := ta.jobs(t, ch.ID)[0]
	ta.Stop() // quit in the middle of the job

	ta = startAppWith(t, cfg)
	if js := ta.jobs(t, ch.ID); len(js) != 1 || js[0].ID != first.ID || !strings.Contains("pending paused", js[0].State) {
		t.Fatalf("after relaunch: %+v", js)
	}
	attachDescriber(t, ta, ch.ID, describeByFirstLine)
	eventually(t, "the description after relaunch", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Storage"
	})
	if js := ta.jobs(t, ch.ID); len(js) != 1 || js[0].ID != first.ID || js[0].State != "completed" || js[0].Attempts != 2 {
		t.Errorf("jobs = %+v", js)
	}
}

// TestDescriptionOfALargePlan: a 200 KB plan is cut into chunks and
// reduced pairwise, in the number of turns the rule gives.
func TestDescriptionOfALargePlan(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 0))
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Storage")
	p := attachDescriber(t, ta, ch.ID, func(material string) string {
		return descriptionJSON(fmt.Sprintf("c%d", strings.Count(material, "\n\n")))
	})
	var b strings.Builder
	for i := range 200 { // 200 blocks of 1,000 bytes: 8 a chunk, 25 chunks
		fmt.Fprintf(&b, "Paragraph %03d %s\n\n", i, strings.Repeat("x", 1000-16))
	}
	if b.Len() != 200_000 {
		t.Fatalf("plan of %d bytes", b.Len())
	}
	ta.putPlan(t, ch.ID, 0, b.String())
	eventually(t, "the description", func() bool { return descriptionOf(ta.channelNow(t, ch.ID)) != "" })
	if n := len(p.seen()); n != 25+24 {
		t.Errorf("%d turns, want 49 (25 chunks, 24 reductions)", n)
	}
	if got := descriptionOf(ta.channelNow(t, ch.ID)); strings.Count(got, "c8") != 25 {
		t.Errorf("description = %q, want the 25 chunks of 8 blocks reduced", got)
	}
}

func TestArchiveSuspendsAndDeleteCancelsDescriptions(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 0))
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Storage")
	ta.putPlan(t, ch.ID, 0, "# Storage\n\nOne file.\n")
	eventually(t, "a paused job", func() bool { js := ta.jobs(t, ch.ID); return len(js) == 1 && js[0].State == "paused" })
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	if js := ta.jobs(t, ch.ID); js[0].State != "paused" || js[0].Reason != "archived" {
		t.Errorf("after archive: %+v", js)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/restore", nil), 200, "")
	eventually(t, "the job waiting for a Planner again", func() bool {
		js := ta.jobs(t, ch.ID)
		return js[0].State == "paused" && js[0].Reason == "planner-unavailable"
	})
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	apptest.Want(t, ta.Do("DELETE", "/api/channels/"+ch.ID, nil), 204, "")
	if js, err := ta.app.store.TargetJobs(context.Background(), ch.ID, 10); err != nil || len(js) != 0 {
		t.Errorf("jobs left after delete: %+v (%v)", js, err)
	}
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("CHOPIN_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestPlannerCommandDescribesTheDocument: chopin planner, Chopin's own
// Planner, answers the isolated turns with its model's structured output.
func TestPlannerCommandDescribesTheDocument(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 0))
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")

	var mu sync.Mutex
	var formats []string
	var toolCounts []int
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Tools          []any           `json:"tools"`
			ResponseFormat json.RawMessage `json:"response_format"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		formats = append(formats, string(req.ResponseFormat))
		toolCounts = append(toolCounts, len(req.Tools))
		mu.Unlock()
		content, _ := json.Marshal(descriptionJSON("Plan for the spring launch"))
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`+string(content)+`},"finish_reason":null}]}`)
		fmt.Fprintf(w, "data: %s\n\n", `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	model := httptest.NewServer(mux)
	t.Cleanup(model.Close)

	env := ta.plannerEnv(nil)
	env["OPENAI_BASE_URL"] = model.URL + "/v1"
	cli := runPlanner(t, env, ta.app.URL()+ch.URL, "--model", "qwen2.5")
	defer func() { cli.cancel(); cli.wait(t) }()
	eventually(t, "chopin planner attached", func() bool { return ta.app.agent.Status(ch.ID).State == "attached" })

	ta.putPlan(t, ch.ID, 0, "# Launch\n\nShip in April.\n")
	eventually(t, "the description", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for the spring launch"
	})
	mu.Lock()
	defer mu.Unlock()
	if len(formats) != 1 || !strings.Contains(formats[0], `"type":"json_schema"`) || !strings.Contains(formats[0], `"description"`) || toolCounts[0] != 0 {
		t.Errorf("model requests: formats %v, tools %v", formats, toolCounts)
	}
}

// TestIsolatedTextIsBounded: an isolated turn's text is kept up to 64 KiB;
// past that it reads as nothing, which is not the JSON asked for.
func TestIsolatedTextIsBounded(t *testing.T) {
	s := &textSink{done: make(chan agentconn.TurnOutcome, 1)}
	s.Part(wire.StreamPart{Type: wire.PartTextDelta, Delta: `{"description":`})
	s.Part(wire.StreamPart{Type: wire.PartReasoningDelta, Delta: "thinking"})
	s.Part(wire.StreamPart{Type: wire.PartTextDelta, Delta: `"Plan"}`})
	if got := s.text(); got != `{"description":"Plan"}` {
		t.Errorf("text = %q", got)
	}
	chunk := strings.Repeat("x", 1000)
	for range 70 {
		s.Part(wire.StreamPart{Type: wire.PartTextDelta, Delta: chunk})
	}
	if got := s.text(); got != "" || s.b.Len() > maxIsolatedText {
		t.Errorf("over the bound: %d bytes kept, text %d bytes", s.b.Len(), len(got))
	}
}
