//go:build unix

package app

// The agents people run, for real: Claude Code, Codex and Gemini CLI as npm
// ships them (agents/package-lock.json), each pointed at a scripted model
// server on 127.0.0.1 (agents/scripted, what it answers each agent is in
// agents/README.md), read a document through Chopin's MCP tools and
// replace its plan with one built from the text the tool result showed
// the model; over /mcp with the token from the environment and through
// `chopin mcp` built from this tree, each set up as docs/mcp.md says. The
// MCP Inspector's CLI lists and calls the tools. What is checked is what
// Chopin kept (the plan, Chat's note) and what the model was shown (the
// scripted server's log).
//
// It runs offline: every agent's telemetry, update checks and error
// reports are turned off by their own settings, so that no DNS look-up
// that fails here slows it down.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// agentPackages are what agents/node_modules must hold, each with its
// program, relative to agents/.
var agentPackages = map[string]string{
	"claude":    "node_modules/@anthropic-ai/claude-code/bin/claude.exe",
	"codex":     "node_modules/@openai/codex/bin/codex.js",
	"gemini":    "node_modules/@google/gemini-cli/bundle/gemini.js",
	"inspector": "node_modules/@modelcontextprotocol/inspector-cli/build/cli.js",
}

// riskSection is what the scripted model adds (agents/scripted/brain.mjs).
const riskSection = "## Risks\n\nThe fuel may freeze.\n"

// agentBench is the suite's shared set-up: the app, the chopin binary, the
// scripted model server.
type agentBench struct {
	agents string // agents/, absolute
	node   string
	bin    string // chopin, built from this tree
	root   string // holds the app's config and data directories
	ta     *testApp
	models string // the scripted model server's URL
	log    string // its log, one JSON line per model request
	setup  *mcp.ClientSession
}

func startAgentBench(t testing.TB) *agentBench {
	t.Helper()
	agents, err := filepath.Abs("../agents")
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range agentPackages {
		if _, err := os.Stat(filepath.Join(agents, p)); err != nil {
			apptest.Missing(t, "agents/node_modules has no %s (run `npm ci` in agents/); .ci/run does", name)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		apptest.Missing(t, "no node on PATH")
	}
	b := &agentBench{agents: agents, node: node, root: t.TempDir()}
	b.bin = filepath.Join(b.root, "chopin")
	if out, err := exec.Command("go", "build", "-o", b.bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("build chopin: %v\n%s", err, out)
	}
	b.ta = startAppWith(t, testConfig(t, b.root))
	b.ta.AddRepository("acme/rocket")
	b.setup = b.ta.mcpSession("test set-up")
	b.log = filepath.Join(b.root, "models.jsonl")
	b.models = b.startModels(t)
	return b
}

// startModels starts agents/scripted/server.mjs and returns its URL.
func (b *agentBench) startModels(t testing.TB) string {
	t.Helper()
	cmd := exec.Command(b.node, "scripted/server.mjs", b.log)
	cmd.Dir = b.agents
	cmd.Stderr = &testLogWriter{t: t, prefix: "scripted models: "}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopGroup(cmd) })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				line <- u
			}
		}
	}()
	select {
	case u := <-line:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("the scripted model server did not start")
		return ""
	}
}

// stopGroup ends a command and everything it started (an agent's MCP
// servers, its sandbox helpers).
func stopGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
}

// document creates a document whose plan names the run, so that each
// run's plan is its own.
func (b *agentBench) document(t testing.TB, title string) (id, source string) {
	t.Helper()
	source = "# " + title + "\n\nShip the rocket; " + title + " reads this line.\n"
	made := callTool(t, b.setup, "create_document", map[string]any{"idempotencyKey": title, "repository": "acme/rocket", "title": title, "plan": source})
	wantOK(t, made, "create_document")
	return made.str("id"), source
}

// agentEnv is an agent's whole environment: nothing of this process's but
// PATH, so that no key, proxy or setting of the person running the tests
// reaches it, and each agent's switches for telemetry and updates.
func (b *agentBench) agentEnv(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + home,
		"NO_COLOR=1"}, extra...)
}

// chopinEnv are the variables that make `chopin mcp` find the app under
// test (a person's chopin finds its own without them).
func (b *agentBench) chopinEnv() map[string]string {
	env := apptest.Env(b.root)
	delete(env, "PORT")
	return env
}

// run runs an agent to its end and returns its stdout and how long it took.
func (b *agentBench) run(t *testing.T, dir string, env []string, program string, args ...string) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
	if err != nil || ctx.Err() != nil {
		t.Fatalf("%s %s: %v (after %s)\nstdout:\n%s\nstderr:\n%s", filepath.Base(program), strings.Join(args, " "), err, took, stdout.String(), stderr.String())
	}
	t.Logf("%s took %s", filepath.Base(program), took.Round(time.Millisecond))
	return stdout.String(), took
}

// modelStep is one line of the scripted server's log.
type modelStep struct {
	API      string `json:"api"`
	Doc      string `json:"doc"`
	Step     string `json:"step"`
	SawPlan  bool   `json:"sawPlan"`
	Revision *int64 `json:"revision"`
	Calls    []struct {
		Name   string `json:"name"`
		Result string `json:"result"`
	} `json:"calls"`
	Decision json.RawMessage `json:"decision"`
}

// steps are the model requests of the run on document id.
func (b *agentBench) steps(t *testing.T, id string) []modelStep {
	t.Helper()
	raw, err := os.ReadFile(b.log)
	if err != nil {
		t.Fatal(err)
	}
	var steps []modelStep
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var s modelStep
		if json.Unmarshal([]byte(line), &s) == nil && s.Doc == id {
			steps = append(steps, s)
		}
	}
	return steps
}

// wantUpdated checks what the run left: the model was shown the plan's
// text in read_document's result and built its update from it, Chopin
// holds the new plan at revision 1, and Chat says who replaced it. With
// deferred, the agent hid Chopin's tools behind its tool search first.
func (b *agentBench) wantUpdated(t *testing.T, id, source, client string, deferred bool) {
	t.Helper()
	steps := b.steps(t, id)
	if len(steps) > 0 && (steps[0].Step == "search") != deferred {
		t.Errorf("the model's first step was %s; the agent hides its MCP tools: %v", steps[0].Step, deferred)
	}
	var trail []string
	saw := false
	for _, s := range steps {
		trail = append(trail, s.Step)
		if s.Step == "update" && s.SawPlan && s.Revision != nil && *s.Revision == 0 {
			for _, c := range s.Calls {
				if strings.HasSuffix(c.Name, "read_document") && strings.Contains(c.Result, "reads this line.") {
					saw = true
				}
			}
		}
	}
	if !saw || len(trail) == 0 || trail[len(trail)-1] != "finished" {
		var shown strings.Builder
		for _, s := range steps {
			fmt.Fprintf(&shown, "\n%s: %s", s.Step, s.Decision)
			for _, c := range s.Calls {
				fmt.Fprintf(&shown, "\n  after %s: %.600s", c.Name, c.Result)
			}
		}
		t.Errorf("the model's steps were %v; it was not shown the plan, or did not finish:%s", trail, shown.String())
	}
	var plan struct {
		Revision int64
		Source   string
	}
	b.ta.Do("GET", "/api/channels/"+id+"/plan", nil).JSON(t, &plan)
	if want := source + "\n" + riskSection; plan.Source != want || plan.Revision != 1 {
		t.Errorf("the plan is at revision %d:\n%s\nwant revision 1:\n%s", plan.Revision, plan.Source, want)
	}
	msgs := b.ta.Do("GET", "/api/channels/"+id+"/messages", nil)
	if note := client + " replaced the plan over MCP (revision 1): added 2 blocks, under “Risks”."; !strings.Contains(string(msgs.Body), note) {
		t.Errorf("Chat has no %q: %s", note, msgs.Body)
	}
}

// prompt is the task every agent is given.
func prompt(id string) string {
	return "Read the Chopin document " + id + " and add a Risks section to its plan."
}

// timings collects how long each agent run took, for the log.
type timings struct {
	mu   sync.Mutex
	runs []string
}

func (tm *timings) add(name string, d time.Duration) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.runs = append(tm.runs, fmt.Sprintf("%s %s", name, d.Round(time.Millisecond)))
}

func TestRealAgents(t *testing.T) {
	b := startAgentBench(t)
	var tm timings
	t.Cleanup(func() { t.Logf("agent runs: %s", strings.Join(tm.runs, ", ")) })
	for _, transport := range []string{"http", "stdio"} {
		t.Run("claude/"+transport, func(t *testing.T) {
			t.Parallel()
			tm.add("claude/"+transport, b.claude(t, transport))
		})
		t.Run("codex/"+transport, func(t *testing.T) {
			t.Parallel()
			tm.add("codex/"+transport, b.codex(t, transport))
		})
		t.Run("gemini/"+transport, func(t *testing.T) {
			t.Parallel()
			tm.add("gemini/"+transport, b.gemini(t, transport))
		})
		t.Run("inspector/"+transport, func(t *testing.T) {
			t.Parallel()
			tm.add("inspector/"+transport, b.inspector(t, transport))
		})
	}
}

// claude sets Chopin up with `claude mcp add --scope user` as docs/mcp.md
// says, then runs `claude -p` with the Chopin tools allowed. Claude Code
// offers MCP tools deferred: the model loads them with ToolSearch first.
// As root it refuses --dangerously-skip-permissions unless IS_SANDBOX=1,
// so the tools are allowed by name instead.
func (b *agentBench) claude(t *testing.T, transport string) time.Duration {
	id, source := b.document(t, "Claude over "+transport)
	home, work := t.TempDir(), t.TempDir()
	claude := filepath.Join(b.agents, agentPackages["claude"])
	env := b.agentEnv(home, "ANTHROPIC_BASE_URL="+b.models, "ANTHROPIC_API_KEY=scripted",
		"CHOPIN_TOKEN="+b.ta.Token(),
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_NON_ESSENTIAL_MODEL_CALLS=1")
	add := []string{"mcp", "add", "--scope", "user"}
	if transport == "http" {
		// The token stays in the environment: Claude Code expands the
		// variable when it connects.
		add = append(add, "--transport", "http", "chopin", b.ta.URL()+"/mcp", "--header", "Authorization: Bearer ${CHOPIN_TOKEN}")
	} else {
		add = append(add, "chopin")
		for k, v := range b.chopinEnv() {
			add = append(add, "-e", k+"="+v)
		}
		add = append(add, "--", b.bin, "mcp")
	}
	b.run(t, work, env, claude, add...)
	out, took := b.run(t, work, env, claude, "-p", prompt(id), "--allowedTools", "mcp__chopin")
	if !strings.Contains(out, "I added a Risks section") {
		t.Errorf("claude said:\n%s", out)
	}
	b.wantUpdated(t, id, source, "claude-code", true)
	return took
}

// codex writes CODEX_HOME/config.toml: the scripted model as a provider
// on the Responses API, with a model Codex knows (it then hides MCP tools
// behind tool_search), no plugins (their catalogue sync looks up
// chatgpt.com and api.github.com), and Chopin as docs/mcp.md says,
// approval included.
func (b *agentBench) codex(t *testing.T, transport string) time.Duration {
	id, source := b.document(t, "Codex over "+transport)
	home, work := t.TempDir(), t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	server := `url = "` + b.ta.URL() + `/mcp"` + "\nbearer_token_env_var = \"CHOPIN_TOKEN\"\n"
	if transport == "stdio" {
		var env []string
		for k, v := range b.chopinEnv() {
			env = append(env, fmt.Sprintf("%s = %q", k, v))
		}
		server = fmt.Sprintf("command = %q\nargs = [\"mcp\"]\nenv = { %s }\n", b.bin, strings.Join(env, ", "))
	}
	config := `model = "gpt-5.5"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "Scripted"
base_url = "` + b.models + `/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"

[features]
plugins = false

[analytics]
enabled = false

[otel]
exporter = "none"

[mcp_servers.chopin]
` + server + `default_tools_approval_mode = "approve"
`
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := b.agentEnv(home, "CODEX_HOME="+codexHome, "SCRIPTED_API_KEY=scripted", "CHOPIN_TOKEN="+b.ta.Token())
	out, took := b.run(t, work, env, b.node, filepath.Join(b.agents, agentPackages["codex"]),
		"exec", "--skip-git-repo-check", prompt(id))
	if !strings.Contains(out, "I added a Risks section") {
		t.Errorf("codex said:\n%s", out)
	}
	b.wantUpdated(t, id, source, "codex-mcp-client", true)
	return took
}

// gemini writes ~/.gemini/settings.json: an API key's auth, no telemetry
// or updates, and Chopin as docs/mcp.md says, trusted, since a run with
// no person to approve a tool offers only trusted servers' tools. The
// workspace is trusted by GEMINI_CLI_TRUST_WORKSPACE.
func (b *agentBench) gemini(t *testing.T, transport string) time.Duration {
	id, source := b.document(t, "Gemini over "+transport)
	home, work := t.TempDir(), t.TempDir()
	server := map[string]any{"httpUrl": b.ta.URL() + "/mcp", "headers": map[string]string{"Authorization": "Bearer $CHOPIN_TOKEN"}, "trust": true}
	if transport == "stdio" {
		server = map[string]any{"command": b.bin, "args": []string{"mcp"}, "env": b.chopinEnv(), "trust": true}
	}
	settings, _ := json.Marshal(map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
		"mcpServers": map[string]any{"chopin": server},
	})
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	env := b.agentEnv(home, "GOOGLE_GEMINI_BASE_URL="+b.models, "GEMINI_API_KEY=scripted", "CHOPIN_TOKEN="+b.ta.Token(),
		"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true")
	out, took := b.run(t, work, env, b.node, filepath.Join(b.agents, agentPackages["gemini"]), "-p", prompt(id))
	if !strings.Contains(out, "I added a Risks section") {
		t.Errorf("gemini said:\n%s", out)
	}
	b.wantUpdated(t, id, source, "gemini-cli-mcp-client", false)
	return took
}

// inspector runs the MCP Inspector's CLI: it lists the tools, reads a
// document, updates it, and is refused an update at a stale revision.
// inspector-cli 1.0.3 finds its own package.json at ../package.json from
// the working directory, so it runs in its build folder.
func (b *agentBench) inspector(t *testing.T, transport string) time.Duration {
	id, source := b.document(t, "Inspector over "+transport)
	cli := filepath.Join(b.agents, agentPackages["inspector"])
	target := []string{"--cli", b.ta.URL() + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + b.ta.Token()}
	if transport == "stdio" {
		target = []string{"--cli"}
		for k, v := range b.chopinEnv() {
			target = append(target, "-e", k+"="+v)
		}
		target = append(target, b.bin, "mcp")
	}
	env := b.agentEnv(t.TempDir())
	var total time.Duration
	call := func(args ...string) map[string]any {
		t.Helper()
		out, took := b.run(t, filepath.Dir(cli), env, b.node, append(append([]string{cli}, target...), args...)...)
		total += took
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("the inspector printed %q: %v", out, err)
		}
		return v
	}

	var listed struct {
		Tools []struct {
			Name         string
			OutputSchema map[string]any
		}
	}
	raw, _ := json.Marshal(call("--method", "tools/list"))
	json.Unmarshal(raw, &listed)
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema["type"] != "object" {
			t.Errorf("%s's outputSchema: %v", tl.Name, tl.OutputSchema)
		}
	}
	if len(names) != 11 || !strings.Contains(strings.Join(names, " "), "read_document") || !strings.Contains(strings.Join(names, " "), "list_versions") {
		t.Errorf("tools: %v", names)
	}

	read := call("--method", "tools/call", "--tool-name", "read_document", "--tool-arg", "id="+id)
	structured, _ := read["structuredContent"].(map[string]any)
	if text, _ := structured["text"].(string); !strings.HasSuffix(text, "text:\n"+source) || read["isError"] == true {
		t.Errorf("read_document: %v", read)
	}
	plan := source + "\n" + riskSection
	updated := call("--method", "tools/call", "--tool-name", "update_document",
		"--tool-arg", "id="+id, "revision=0", "plan="+plan, "idempotencyKey=inspector-"+transport)
	if s, _ := updated["structuredContent"].(map[string]any); updated["isError"] == true || s["revision"] != float64(1) {
		t.Errorf("update_document: %v", updated)
	}
	stale := call("--method", "tools/call", "--tool-name", "update_document",
		"--tool-arg", "id="+id, "revision=0", "plan=# Other\n", "idempotencyKey=inspector-stale-"+transport)
	if s, _ := stale["structuredContent"].(map[string]any); stale["isError"] != true || s["code"] != "revision-conflict" || s["currentRevision"] != float64(1) {
		t.Errorf("a stale update_document: %v", stale)
	}
	var got struct{ Source string }
	b.ta.Do("GET", "/api/channels/"+id+"/plan", nil).JSON(t, &got)
	if got.Source != plan {
		t.Errorf("the plan:\n%s", got.Source)
	}
	return total
}
