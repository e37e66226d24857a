package app

// End to end: chopin planner reads the document's repository's checkout.
// A person's @chopin message leads the model to call search_code and
// read_file; the plan edit it makes cites the file it read; a key in .env
// is masked before the model sees it; an escape is refused with an Error:
// line; and a checkout changed in Chopin applies to the next turn.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

const checkoutToken = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

// checkoutModel is an OpenAI-compatible server whose model researches the
// code before it edits the plan, one tool call a round.
type checkoutModel struct {
	ts *httptest.Server

	mu      sync.Mutex
	system  []string   // each request's system message
	tools   [][]string // each request's tool names
	results []string   // every tool result the model read, in order
}

func newCheckoutModel(t *testing.T) *checkoutModel {
	t.Helper()
	m := &checkoutModel{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
			Tools    []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		raw := new(bytes.Buffer)
		raw.ReadFrom(r.Body)
		if answerDescription(w, raw.Bytes()) {
			return
		}
		json.Unmarshal(raw.Bytes(), &req)
		var results []string
		var names []string
		for _, tool := range req.Tools {
			names = append(names, tool.Function.Name)
		}
		for _, msg := range req.Messages {
			if msg.Role == "tool" {
				results = append(results, msg.Content)
			}
		}
		prompt := req.Messages[len(req.Messages)-1].Content
		m.mu.Lock()
		m.system = append(m.system, req.Messages[0].Content)
		m.tools = append(m.tools, names)
		if len(results) > 0 {
			m.results = append(m.results, results[len(results)-1])
		}
		m.mu.Unlock()

		call := func(name string, args any) string {
			a, _ := json.Marshal(args)
			s, _ := json.Marshal(string(a))
			return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c%d","type":"function","function":{"name":%q,"arguments":%s}}]},"finish_reason":"tool_calls"}]}`, len(results), name, s)
		}
		var event string
		switch {
		case strings.Contains(prompt, "again"):
			event = `{"choices":[{"index":0,"delta":{"content":"Noted."},"finish_reason":"stop"}]}`
		case len(results) == 0:
			event = call("search_code", map[string]any{"pattern": "func Start"})
		case len(results) == 1:
			file := regexp.MustCompile(`(?m)^([^:\n]+):\d+: func Start`).FindStringSubmatch(results[0])
			path := "missing"
			if file != nil {
				path = file[1]
			}
			event = call("read_file", map[string]any{"path": path})
		case len(results) == 2:
			event = call("read_file", map[string]any{"path": ".env"})
		case len(results) == 3:
			event = call("read_file", map[string]any{"path": "../outside.txt"})
		case len(results) == 4:
			event = call("read_plan", map[string]any{})
		case len(results) == 5:
			rev := revisionLine.FindStringSubmatch(results[4])
			file := regexp.MustCompile(`(?m)^file: (\S+)$`).FindStringSubmatch(results[1])
			cited := "nothing"
			if file != nil {
				cited = file[1]
			}
			if rev == nil {
				rev = []string{"", "0"}
			}
			event = call("edit_plan", map[string]any{"revision": json.Number(rev[1]), "operations": []any{
				map[string]any{"op": "insert_root", "content": "## Code\n\nThe engine starts in `" + cited + "`."}}})
		default:
			event = `{"choices":[{"index":0,"delta":{"content":"I read the code and added a Code section."},"finish_reason":"stop"}]}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", event)
	})
	m.ts = httptest.NewServer(mux)
	t.Cleanup(m.ts.Close)
	return m
}

func TestPlannerReadsTheCheckout(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/engine")
	dir := gitCheckout(t, "git@github.com:octo/engine.git")
	os.MkdirAll(filepath.Join(dir, "cmd"), 0o755)
	os.WriteFile(filepath.Join(dir, "cmd", "engine.go"), []byte("package main\n\n// Start runs the engine.\nfunc Start() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("GITHUB_TOKEN="+checkoutToken+"\n"), 0o644)
	os.WriteFile(filepath.Join(filepath.Dir(dir), "outside.txt"), []byte("outside\n"), 0o644)
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/engine", map[string]string{"path": dir}), 200, "")
	ch := ta.CreateDocument("octo/engine", "Start")
	browser := ta.DialRoom(ch.ID)
	model := newCheckoutModel(t)
	env := ta.plannerEnv(nil)
	env["OPENAI_BASE_URL"] = model.ts.URL + "/v1"
	runPlanner(t, env, ta.app.URL()+ch.URL)

	// The Planner's status says what it reads, as the header shows it.
	status := func() map[string]any {
		for {
			st := browser.Until("planner:status")["planner"].(map[string]any)
			if c, ok := st["checkout"].(map[string]any); ok && st["state"] == "attached" {
				return c
			}
		}
	}
	if c := status(); c["path"] != dir || c["branch"] != "main" || c["git"] != true || len(c["head"].(string)) != 40 {
		t.Fatalf("the status's checkout: %v", c)
	}

	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin where does the engine start?"})
	var reply map[string]any
	for reply == nil || reply["status"] == "streaming" {
		if m := browser.Until("chat:message")["message"].(map[string]any); m["role"] == "planner" {
			reply = m
		}
	}
	if reply["status"] != "done" || reply["text"] != "I read the code and added a Code section." {
		t.Fatalf("reply %v", reply)
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if !strings.Contains(plan.Source, "The engine starts in `cmd/engine.go`.") {
		t.Errorf("the plan does not cite the file the model read: %q", plan.Source)
	}

	model.mu.Lock()
	system, tools, results := model.system[0], model.tools[0], model.results
	model.mu.Unlock()
	if !strings.Contains(system, "## The repository's code") || !strings.Contains(system, dir) {
		t.Errorf("the system message does not introduce the checkout: %q", system)
	}
	if got := strings.Join(tools, ","); !strings.Contains(got, "list_files,read_file,search_code,git_log,git_show") {
		t.Errorf("tools offered: %s", got)
	}
	if len(results) != 6 {
		t.Fatalf("the model read %d results: %q", len(results), results)
	}
	if !strings.Contains(results[0], "cmd/engine.go:4: func Start() {}") || !strings.Contains(results[1], "     3\t// Start runs the engine.") {
		t.Errorf("search_code and read_file: %q", results[:2])
	}
	if strings.Contains(results[2], checkoutToken) || !strings.Contains(results[2], "[redacted]") {
		t.Errorf("the .env key reached the model: %q", results[2])
	}
	if !strings.HasPrefix(results[3], "Error: ") || !strings.Contains(results[3], `goes up with ".."`) || strings.Contains(results[3], "\n") {
		t.Errorf("an escape: %q", results[3])
	}

	// Chat's work details show the calls, failed one included, masked.
	var list struct{ Messages []room.Message }
	r := ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil)
	r.JSON(t, &list)
	if bytes.Contains(r.Body, []byte(checkoutToken)) {
		t.Errorf("the key reached Chat")
	}
	var details room.ReplyDetails
	json.Unmarshal(list.Messages[len(list.Messages)-1].Details, &details)
	var rows []string
	for _, tool := range details.Tools {
		rows = append(rows, tool.Name+" "+tool.Status)
	}
	if got := strings.Join(rows, ", "); got != "search_code done, read_file done, read_file done, read_file failed, read_plan done, edit_plan done" {
		t.Errorf("work details: %s", got)
	}

	// A checkout changed in Chopin is what the next turn reads.
	other := gitCheckout(t, "")
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/engine", map[string]string{"path": other}), 200, "")
	browser.Send(map[string]any{"type": "chat:send", "id": "m2", "text": "@chopin again"})
	if c := status(); c["path"] != other {
		t.Errorf("after the change, the status reads %v, want %s", c["path"], other)
	}
	for {
		if m := browser.Until("chat:message")["message"].(map[string]any); m["role"] == "planner" && m["status"] == "done" {
			break
		}
	}
	model.mu.Lock()
	last := model.system[len(model.system)-1]
	model.mu.Unlock()
	if !strings.Contains(last, other) {
		t.Errorf("the next turn's system message names %q, want %s", last, other)
	}
}

// TestPlannerCheckoutFlag: --checkout reads a folder of the person's
// choosing, whatever Chopin has for the repository, and one that is not
// there stops the command at once.
func TestPlannerCheckoutFlag(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/engine")
	ch := ta.CreateDocument("octo/engine", "Start")
	browser := ta.DialRoom(ch.ID)
	model := newCheckoutModel(t)
	env := ta.plannerEnv(nil)
	env["OPENAI_BASE_URL"] = model.ts.URL + "/v1"
	dir := gitCheckout(t, "")

	bad := runPlanner(t, env, ta.app.URL()+ch.URL, "--checkout", filepath.Join(dir, "missing"))
	if code := bad.wait(t); code != 2 || !strings.Contains(bad.stderr.String(), "chopin planner: --checkout: ") {
		t.Fatalf("a missing --checkout: exit %d, %q", code, bad.stderr.String())
	}

	runPlanner(t, env, ta.app.URL()+ch.URL, "--checkout", dir)
	for {
		st := browser.Until("planner:status")["planner"].(map[string]any)
		if c, ok := st["checkout"].(map[string]any); ok {
			if c["path"] != dir || c["branch"] != "main" {
				t.Fatalf("--checkout reads %v", c)
			}
			break
		}
	}
}
