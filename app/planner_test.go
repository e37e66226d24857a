package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
)

// chopin planner against the real app: the command finds the running
// Chopin and its agent token, attaches, and answers a person's @chopin
// message with a model on a fake OpenAI-compatible server.

const plannerAPIKey = "sk-planner-test-key"

// fakeModelServer is an OpenAI-compatible server whose model reads the
// plan, adds a Risks section at the revision it read, then answers.
type fakeModelServer struct {
	ts *httptest.Server

	mu    sync.Mutex
	auths []string
	first map[string]any // the first chat request, as sent
}

var revisionLine = regexp.MustCompile(`(?m)^revision: (\d+)$`)

// answerDescription answers a request for a document's description (an
// isolated turn, the only one that asks for a response_format) as a model
// would, and reports whether it was one. A fake model server calls it first
// so that descriptions, which Chopin asks for whenever a Planner is
// attached and a document opens, stay out of the turns a test scripts.
func answerDescription(w http.ResponseWriter, body []byte) bool {
	if !bytes.Contains(body, []byte(`"response_format"`)) {
		return false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"{\"description\":\"Plan for the launch\"}"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	return true
}

func newFakeModelServer(t *testing.T) *fakeModelServer {
	t.Helper()
	f := &fakeModelServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5","object":"model"},{"id":"llama3.2","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		raw := new(bytes.Buffer)
		raw.ReadFrom(r.Body)
		json.Unmarshal(raw.Bytes(), &req)
		if answerDescription(w, raw.Bytes()) {
			return // apart from the Chat turns this server records
		}
		f.mu.Lock()
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		if f.first == nil {
			json.Unmarshal(raw.Bytes(), &f.first)
		}
		f.mu.Unlock()

		var tools []string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools = append(tools, m.Content)
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
			events = []string{chunk(`{"reasoning":"Read it first."}`),
				chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_plan","arguments":"{}"}}]}`),
				finish("tool_calls")}
		case 1:
			rev := "0"
			if m := revisionLine.FindStringSubmatch(tools[0]); m != nil {
				rev = m[1]
			}
			args, _ := json.Marshal(`{"revision":` + rev + `,"operations":[{"op":"insert_root","content":"## Risks\n\nNone yet."}]}`)
			events = []string{chunk(`{"tool_calls":[{"index":0,"id":"call_2","type":"function","function":{"name":"edit_plan","arguments":` + string(args) + `}}]}`),
				finish("tool_calls")}
		default:
			events = []string{chunk(`{"content":"I added "}`), chunk(`{"content":"a Risks section."}`), finish("stop")}
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

// plannerCLI runs chopin planner in-process against ta's data and config
// directories, as a person on the same computer would.
type plannerCLI struct {
	*apptest.Command
	stdout, stderr *apptest.Buffer
}

func runPlanner(t testing.TB, env map[string]string, args ...string) *plannerCLI {
	t.Helper()
	c := apptest.StartCommand(t, "chopin planner", func(ctx context.Context, stdout, stderr io.Writer) int {
		c := &cli.CLI{Local: Local{}, Stdout: stdout, Stderr: stderr, Getenv: func(k string) string { return env[k] }, ACP: testACP}
		return c.Run(ctx, append([]string{"planner"}, args...))
	})
	return &plannerCLI{Command: c, stdout: c.Stdout, stderr: c.Stderr}
}

func (p *plannerCLI) cancel() { p.Interrupt() }

func (p *plannerCLI) wait(t testing.TB) int {
	t.Helper()
	return p.Wait(t, "chopin planner")
}

// stop interrupts chopin planner, as Ctrl+C does, and waits for its exit.
func (p *plannerCLI) stop(t testing.TB) int {
	t.Helper()
	p.cancel()
	return p.wait(t)
}

func (ta *testApp) plannerEnv(model *fakeModelServer) map[string]string {
	env := map[string]string{
		"CHOPIN_DATA_DIR":   ta.app.cfg.DataDir,
		"CHOPIN_CONFIG_DIR": ta.app.cfg.ConfigDir,
		"OPENAI_API_KEY":    plannerAPIKey,
	}
	if model != nil {
		env["OPENAI_BASE_URL"] = model.ts.URL + "/v1"
	}
	return env
}

// TestPlannerCommandAnswersInChat: a person's @chopin message over the room
// socket reaches chopin planner, whose model reads and edits the plan, and
// the reply streams into Chat.
func TestPlannerCommandAnswersInChat(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	model := newFakeModelServer(t)
	docURL := ta.app.URL() + ch.URL

	// The flag after the document is read as a flag.
	cli := runPlanner(t, ta.plannerEnv(model), docURL, "--model", "qwen2.5")
	for {
		st := browser.Until("planner:status")["planner"].(map[string]any)
		if st["state"] == "attached" {
			break
		}
	}

	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin add a risks section"})
	var reply map[string]any
	for reply == nil || reply["status"] == "streaming" {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" {
			reply = m
		}
	}
	if reply["status"] != "done" || reply["text"] != "I added a Risks section." {
		t.Fatalf("reply %v", reply)
	}

	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Launch\n\n## Risks\n\nNone yet.\n" {
		t.Errorf("plan %q", plan.Source)
	}
	var list struct{ Messages []room.Message }
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	last := list.Messages[len(list.Messages)-1]
	var details room.ReplyDetails
	json.Unmarshal(last.Details, &details)
	if details.Reasoning != "Read it first." || len(details.Tools) != 2 ||
		details.Tools[0].Name != "read_plan" || details.Tools[0].Status != "done" ||
		details.Tools[1].Name != "edit_plan" || details.Tools[1].Status != "done" {
		t.Errorf("reply details %+v", details)
	}

	model.mu.Lock()
	auths, first := model.auths, model.first
	model.mu.Unlock()
	if len(auths) != 3 || auths[0] != "Bearer "+plannerAPIKey {
		t.Errorf("authorization headers %q", auths)
	}
	msgs, _ := first["messages"].([]any)
	if first["model"] != "qwen2.5" || first["stream"] != true || len(msgs) != 2 ||
		msgs[0].(map[string]any)["role"] != "system" || !strings.HasPrefix(msgs[0].(map[string]any)["content"].(string), plannerhost.SystemPrompt) ||
		msgs[1].(map[string]any)["content"] != "@ada: @chopin add a risks section" {
		t.Errorf("first request %v", first)
	}
	var tools []string
	for _, tool := range first["tools"].([]any) {
		tools = append(tools, tool.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if strings.Join(tools, " ") != "read_plan edit_plan ask open_decisions list_versions read_version" {
		t.Errorf("tools %v", tools)
	}

	// Ctrl+C detaches: the document's Planner is in its grace period.
	if code := cli.stop(t); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, cli.stderr)
	}
	out := cli.stdout.String()
	for _, line := range []string{
		"Answering with qwen2.5 on " + model.ts.URL + "/v1. Press Ctrl+C to stop.",
		`Attached to "Launch" (` + docURL + `) as its Planner.`,
		`Detached from "Launch".`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("stdout lacks %q:\n%s", line, out)
		}
	}
	if all := out + cli.stderr.String(); strings.Contains(all, plannerAPIKey) || strings.Contains(all, ta.Token()) {
		t.Errorf("a secret was printed:\n%s", all)
	}
	for st := map[string]any{}; st["state"] != "grace"; {
		st = browser.Until("planner:status")["planner"].(map[string]any)
	}
}

// TestPlannerCommandErrors: what a person reads when chopin planner cannot
// start or attach.
func TestPlannerCommandErrors(t *testing.T) {
	chopinOnPath(t) // the messages name "chopin", as for a person who installed it
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	model := newFakeModelServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	idle := t.TempDir()

	for _, tc := range []struct {
		name string
		env  map[string]string // over the app's
		args []string
		code int
		want string // stderr
	}{
		{
			name: "no document", args: nil, code: 2,
			want: "chopin planner: name a document: its URL, as the browser shows it, or its ID.\nRun \"chopin planner --help\" for usage.\n",
		},
		{
			name: "model server not running", env: map[string]string{"OPENAI_BASE_URL": closed}, args: []string{ch.ID}, code: 1,
			want: "chopin planner: The model server at " + closed + " did not answer: connection refused. Is it running? Start it, or name another with --base-url.\n",
		},
		{
			name: "unknown model", args: []string{"--model", "mistral", ch.ID}, code: 1,
			want: "chopin planner: The model server does not know the model \"mistral\"; it has: qwen2.5, llama3.2.\n",
		},
		{
			name: "Chopin not running", env: map[string]string{"CHOPIN_DATA_DIR": idle}, args: []string{"--model", "qwen2.5", ch.ID}, code: 1,
			want: "chopin planner: Chopin is not running (data directory " + idle + "). Start it with \"chopin\", or name another with --url.\n",
		},
		{
			name: "wrong token", args: []string{"--model", "qwen2.5", "--token", "chopin_a_not-the-token", ch.ID}, code: 1,
			want: "chopin planner: Chopin at " + ta.app.URL() + " did not accept the agent token (HTTP 401). Run \"chopin token\" where Chopin runs to print the current one.\n",
		},
		{
			name: "no such document", args: []string{"--model", "qwen2.5", "--url", ta.app.URL(), "nope"}, code: 1,
			want: "chopin planner: nope: No document matches this id or URL, or it is being deleted. Copy the document's address from Chopin and try again.\n",
		},
		{
			name: "bad model server URL", env: map[string]string{"OPENAI_BASE_URL": "localhost:11434"}, args: []string{ch.ID}, code: 2,
			want: "chopin planner: the model server URL \"localhost:11434\" is not an http:// or https:// URL, such as http://127.0.0.1:11434/v1\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := ta.plannerEnv(model)
			for k, v := range tc.env {
				env[k] = v
			}
			cli := runPlanner(t, env, tc.args...)
			if code := cli.wait(t); code != tc.code || cli.stderr.String() != tc.want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, cli.stderr, tc.code, tc.want)
			}
		})
	}

	cli := runPlanner(t, nil, "--help")
	if code := cli.wait(t); code != 0 || !strings.HasPrefix(cli.stdout.String(), "Usage: chopin planner [flags] <document URL or ID>...") {
		t.Errorf("--help: exit %d\n%s", code, cli.stdout)
	}
}
