package plannerhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
)

// chopin planner's optional features against the real app: its catalog in
// the composers, a person's choice and attachments in the model request, a
// steer read at the next round, and reattaching across a restart; and the
// Go client's resume of a question across a drop.

// scriptedModel is an OpenAI-compatible server that records every chat
// request as sent and answers each with reply (nil: a short text answer).
type scriptedModel struct {
	ts    *httptest.Server
	reply func(n int, req map[string]any) []string // the SSE data lines of the n-th request (1-based)

	mu   sync.Mutex
	reqs []map[string]any
}

func newScriptedModel(t *testing.T, models string, reply func(int, map[string]any) []string) *scriptedModel {
	t.Helper()
	f := &scriptedModel{reply: reply}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":`+models+`}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		if req["response_format"] != nil {
			// The document's description (an isolated turn), apart from
			// the Chat turns this server records.
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", textChunk(`{"description":"Plan for the launch"}`))
			return
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		n := len(f.reqs)
		f.mu.Unlock()
		events := []string{textChunk("Done."), finishChunk("stop")}
		if f.reply != nil {
			if e := f.reply(n, req); e != nil {
				events = e
			}
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

func textChunk(s string) string {
	b, _ := json.Marshal(s)
	return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func finishChunk(reason string) string {
	return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

func toolChunk(id, name string) string {
	return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":"{}"}}]},"finish_reason":null}]}`
}

func (f *scriptedModel) request(t *testing.T, n int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for {
		f.mu.Lock()
		if len(f.reqs) >= n {
			r := f.reqs[n-1]
			f.mu.Unlock()
			return r
		}
		f.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("the model server got no request %d", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *scriptedModel) env(ta *testApp) map[string]string {
	return map[string]string{
		"CHOPIN_DATA_DIR":   ta.app.Config().DataDir,
		"CHOPIN_CONFIG_DIR": ta.app.Config().ConfigDir,
		"OPENAI_API_KEY":    plannerAPIKey,
		"OPENAI_BASE_URL":   f.ts.URL + "/v1",
	}
}

// waitAttached waits until the document shows its Planner attached.
func waitAttached(t *testing.T, ta *testApp, channelID string) {
	t.Helper()
	ta.eventually(func() bool { return ta.plannerState(channelID) == "attached" })
}

// plannerReply waits for the Planner's finished reply in Chat.
func plannerReply(t *testing.T, browser *apptest.Room) map[string]any {
	t.Helper()
	for {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" && m["status"] != "streaming" {
			return m
		}
	}
}

// TestPlannerCatalogAndAttachments: chopin planner reports the model
// server's models as its catalog, which the room's composers get as
// chat:model; a person's model and thinking level reach the model request,
// and so do a message's image, as an image_url part, and its text file.
func TestPlannerCatalogAndAttachments(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	model := newScriptedModel(t, `[{"id":"qwen2.5"},{"id":"llava","input_modalities":["text","image"]},{"id":"gemma3"}]`, nil)
	runPlanner(t, model.env(ta), ch.ID, "--model", "qwen2.5", "--reasoning-effort", "medium", "--image-models", "gemma3")

	m := modelUntil(browser, func(m map[string]any) bool { return m["offered"] == true })
	var ids, inputs []string
	for _, v := range m["models"].([]any) {
		e := v.(map[string]any)
		ids = append(ids, e["id"].(string))
		inputs = append(inputs, strings.Join(toStrings(e["inputTypes"]), "+"))
		if got := strings.Join(toStrings(e["thinkingLevels"]), ","); got != "low,medium,high" {
			t.Errorf("%s levels %q", e["id"], got)
		}
	}
	def := m["default"].(map[string]any)
	if strings.Join(ids, ",") != "qwen2.5,llava,gemma3" || strings.Join(inputs, ",") != "text,text+image,text+image" ||
		def["id"] != "qwen2.5" || def["thinkingLevel"] != "medium" {
		t.Fatalf("chat:model %v", m)
	}

	// The person's choice is the request's model and reasoning_effort.
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/planner/model", map[string]string{"model": "llava", "thinkingLevel": "high"}), 200, "")
	pic := attachmentPNG(t)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]any{"text": "@chopin look",
		"attachments": []map[string]string{{"name": "photo.png", "data": b64(pic)}, {"name": "notes.md", "data": b64([]byte("hello\n"))}}}), 201, "")
	req := model.request(t, 1)
	if req["model"] != "llava" || req["reasoning_effort"] != "high" {
		t.Errorf("request model %v effort %v", req["model"], req["reasoning_effort"])
	}
	msgs := req["messages"].([]any)
	user := msgs[len(msgs)-1].(map[string]any)
	parts, _ := user["content"].([]any)
	if user["role"] != "user" || len(parts) != 3 {
		t.Fatalf("user message %v", user)
	}
	text, image, file := parts[0].(map[string]any), parts[1].(map[string]any), parts[2].(map[string]any)
	if text["type"] != "text" || text["text"] != "@ada: @chopin look" ||
		image["type"] != "image_url" || image["image_url"].(map[string]any)["url"] != "data:image/png;base64,"+b64(pic) ||
		file["type"] != "text" || file["text"] != "<file name=\"notes.md\">\nhello\n</file>" {
		t.Errorf("parts %v", parts)
	}
	if r := plannerReply(t, browser); r["status"] != "done" || r["text"] != "Done." {
		t.Fatalf("reply %v", r)
	}
}

// TestPlannerSteer: a steer taken while the model answers is a user
// message of the turn's next round.
func TestPlannerSteer(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	release := make(chan struct{})
	model := newScriptedModel(t, `[{"id":"qwen2.5"}]`, func(n int, _ map[string]any) []string {
		if n == 1 {
			<-release // the turn is in its first round until the steer is taken
			return []string{toolChunk("call_1", "read_plan"), finishChunk("tool_calls")}
		}
		return nil
	})
	runPlanner(t, model.env(ta), ch.ID, "--model", "qwen2.5")
	waitAttached(t, ta, ch.ID)

	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin first"}), 201, "")
	model.request(t, 1)
	out, err := ta.app.Agent().Steer(context.Background(), ch.ID, "@ada: keep it short")
	close(release)
	if err != nil || !out.Answered || !out.OK {
		t.Fatalf("steer: %+v %v", out, err)
	}
	msgs := model.request(t, 2)["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "user" || last["content"] != "@ada: keep it short" || msgs[len(msgs)-2].(map[string]any)["role"] != "tool" {
		t.Fatalf("the second round's messages %v", msgs)
	}
	if r := plannerReply(t, browser); r["status"] != "done" {
		t.Fatalf("reply %v", r)
	}
	// Once the turn has ended a steer is refused.
	waitIdle(t, ta, ch.ID)
	if out, err := ta.app.Agent().Steer(context.Background(), ch.ID, "@ada: late"); err == nil && out.OK {
		t.Errorf("a steer after the turn was taken: %+v", out)
	}
}

// TestPlannerReattachesAfterRestart: when Chopin restarts, chopin planner
// comes back at once and then every 250 ms inside the announced window,
// never on its own backoff, resumes, and answers in the new process.
func TestPlannerReattachesAfterRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.HandoverPlannerWindow = time.Hour
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	model := newScriptedModel(t, `[{"id":"qwen2.5"}]`, nil)
	cli := runPlanner(t, model.env(ta), ch.ID, "--model", "qwen2.5")
	waitAttached(t, ta, ch.ID)

	ta.Stop()
	ta2 := startAppWith(t, cfg)
	deadline := time.Now().Add(apptest.Wait)
	for !strings.Contains(cli.Stdout.String(), "Attached again") {
		if time.Now().After(deadline) {
			t.Fatalf("the planner did not attach again:\n%s\n%s", cli.Stdout, cli.Stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	out := cli.Stdout.String()
	if !strings.Contains(out, "dropped (Chopin is restarting); attaching again in 0s.") {
		t.Errorf("output:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "Trying again in") && !strings.HasSuffix(line, "Trying again in 250ms.") {
			t.Errorf("inside the window the planner waited its own backoff: %s", line)
		}
	}
	waitAttached(t, ta2, ch.ID)
	browser := ta2.DialRoom(ch.ID)
	apptest.Want(t, ta2.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin hello"}), 201, "")
	if r := plannerReply(t, browser); r["status"] != "done" || r["text"] != "Done." {
		t.Fatalf("reply after the restart %v", r)
	}
}

// TestClientResumesQuestion: a client granted resumable-sessions whose link
// drops with a question open keeps it; answered while the link is down, it
// is resumed with Link.Resumption and gets the answer once, acknowledged so
// that Chopin holds it no more.
func TestClientResumesQuestion(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	results := make(chan client.Result, 4)
	sessions := make(chan string, 1)
	features := []string{wire.FeatureResumableSessions}
	h := client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		s := tr.Session
		go func() {
			r, err := s.Ask(context.Background(), wire.Input{Method: wire.MethodConfirm, Title: "Ship it?"}, client.AskOptions{Request: "r1"})
			if err != nil {
				r.Message = err.Error()
			}
			results <- r
		}()
		// The question is open before the turn ends, so the session stays.
		ta.eventually(func() bool { return len(plannerOpenDecisions(ta, ch.ID)) == 1 })
		sessions <- s.ID
		return nil
	}}
	link := ta.attachWith(ch.ID, features, h)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	session := recvT(t, sessions)
	waitIdle(t, ta, ch.ID)

	link.Close() // the network fails: no detach
	<-link.Done()
	held := link.Resumption()
	if held == nil || !reflect.DeepEqual(held.Sessions(), []string{session}) {
		t.Fatalf("kept %v", held)
	}
	select {
	case r := <-results:
		t.Fatalf("the drop settled the question: %+v", r)
	default:
	}
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "disconnected" })
	decision := plannerOpenDecisions(ta, ch.ID)[0]["id"].(string)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+decision+"/answer", map[string]any{"yes": true}), 200, "")

	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	back, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: ch.ID, Features: features, Handler: describing(h), Resume: held})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if r := recvT(t, results); r.Status != "answered" || !r.Yes {
		t.Fatalf("result %+v", r)
	}
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "attached" })

	// The answer was acknowledged: after another drop, a resume naming the
	// request is not given it again.
	back.Close()
	ta.eventually(func() bool { return ta.plannerState(ch.ID) != "attached" })
	raw := ta.dialRawAgent(wire.FeatureResumableSessions)
	raw.attach(ch.ID)
	raw.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	resumed, ok := raw.next().(wire.Resumed)
	if !ok {
		t.Fatal("no resumed")
	}
	for _, s := range resumed.Sessions {
		if len(s.Requests) != 0 {
			t.Errorf("the acknowledged answer is still held: %+v", resumed)
		}
	}
	raw.send(wire.Detach{})
	if code, extra := raw.closed(); len(extra) != 0 {
		t.Errorf("after the resume: %v then close %d", extra, code)
	}
	select {
	case r := <-results:
		t.Errorf("a second result %+v", r)
	default:
	}
}

func plannerOpenDecisions(ta *testApp, channelID string) []map[string]any {
	var body struct{ Decisions []map[string]any }
	ta.Do("GET", "/api/channels/"+channelID+"/decisions", nil).JSON(ta.T, &body)
	var open []map[string]any
	for _, d := range body.Decisions {
		if d["status"] == "open" {
			open = append(open, d)
		}
	}
	return open
}

func recvT[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(apptest.Wait):
		t.Fatal("timed out")
		var zero T
		return zero
	}
}
