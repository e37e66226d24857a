//go:build linux

package app

// The ACP presets of `chopin planner --acp`, for real: Claude Code through
// @zed-industries/claude-agent-acp, Codex through @zed-industries/codex-acp
// and Gemini CLI with --acp, as npm ships them (agents/package-lock.json),
// each pointed at the scripted model server (agents/scripted/planner.mjs
// is the Planner's script), run by a chopin binary built from this tree
// exactly as a person runs it, found on PATH as installed adapters. Per
// preset: a Planner turn reads the plan, runs one of the agent's own
// commands after a person allows it over the room socket, edits the plan
// at the revision it read and replies in Chat; Stop mid-turn; the agent
// killed mid-turn, and the next turn served by a new agent; and SIGTERM
// to chopin planner mid-turn, after which no process of the agent's group
// is left. What is checked is what Chopin kept (the plan, Chat, Decisions),
// the file the command wrote, and /proc.
//
// It runs offline, with agents_test.go's bench and each agent's switches
// for telemetry and updates.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// acpAdapters are the programs the presets find on PATH, in
// agents/node_modules/.bin.
var acpAdapters = map[string]string{
	"claude": "claude-agent-acp",
	"codex":  "codex-acp",
	"gemini": "gemini",
}

// scriptedCommand is what the scripted Planner runs with the agent's shell
// tool (agents/scripted/planner.mjs), and the file it writes.
const (
	scriptedCommand = "touch risks-checked.txt"
	scriptedFile    = "risks-checked.txt"
)

// modelAPI is the scripted server's name for each preset's API, as its log
// says.
var modelAPI = map[string]string{"claude": "anthropic", "codex": "openai", "gemini": "gemini"}

func startACPBench(t testing.TB) *agentBench {
	t.Helper()
	b := startAgentBench(t)
	for preset, bin := range acpAdapters {
		if _, err := os.Stat(filepath.Join(b.agents, "node_modules", ".bin", bin)); err != nil {
			apptest.Missing(t, "agents/node_modules has no %s for --acp %s (run `npm ci` in agents/); .ci/run does", bin, preset)
		}
	}
	return b
}

// acpEnv is the environment chopin planner --acp runs with for preset, and
// so its agent: agentEnv's, the installed adapters first on PATH, the
// variables that find the app under test, and the agent's own set-up in
// home pointing it at the scripted model.
func (b *agentBench) acpEnv(t testing.TB, preset, home string) []string {
	t.Helper()
	env := b.agentEnv(home)
	env[0] = "PATH=" + filepath.Join(b.agents, "node_modules", ".bin") + ":" + filepath.Dir(b.node) + ":" + os.Getenv("PATH")
	for k, v := range b.chopinEnv() {
		env = append(env, k+"="+v)
	}
	switch preset {
	case "claude":
		env = append(env, "ANTHROPIC_BASE_URL="+b.models, "ANTHROPIC_API_KEY=scripted",
			"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_NON_ESSENTIAL_MODEL_CALLS=1")
	case "codex":
		codexHome := filepath.Join(home, ".codex")
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
`
		if err := os.MkdirAll(codexHome, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "CODEX_HOME="+codexHome, "SCRIPTED_API_KEY=scripted")
	case "gemini":
		settings, _ := json.Marshal(map[string]any{
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
			"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"telemetry": map[string]any{"enabled": false},
		})
		if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), settings, 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+b.models, "GEMINI_API_KEY=scripted", "GEMINI_CLI_NO_RELAUNCH=true")
	}
	return env
}

// acpPlanner is a running `chopin planner --acp PRESET DOCUMENT`.
type acpPlanner struct {
	cmd    *exec.Cmd
	out    *lockedBuffer // its stdout and stderr
	exited chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (b *agentBench) startACPPlanner(t testing.TB, preset, doc, home string) *acpPlanner {
	t.Helper()
	cmd := exec.Command(b.bin, "planner", "--acp", preset, doc)
	cmd.Env, cmd.Dir = b.acpEnv(t, preset, home), home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &acpPlanner{cmd: cmd, out: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		for _, pid := range childrenOf(cmd.Process.Pid) {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("chopin planner --acp %s said:\n%s", preset, p.out.String())
		}
	})
	return p
}

// waitAttached waits until the planner attached to the document: longer
// than the room helpers wait, as gemini --help and the agent's start take
// a while on a busy machine.
func (p *acpPlanner) waitAttached(t testing.TB, b *agentBench, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var st struct{ State string }
		b.ta.Do("GET", "/api/channels/"+id+"/planner", nil).JSON(t, &st)
		if st.State == "attached" {
			return
		}
		select {
		case err := <-p.exited:
			t.Fatalf("chopin planner exited before it attached: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("chopin planner did not attach within a minute")
		}
	}
}

// childrenOf are the live processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// agentOf is the agent process chopin planner runs (its one child).
func (p *acpPlanner) agentOf(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for {
		if kids := childrenOf(p.cmd.Process.Pid); len(kids) == 1 {
			return kids[0]
		} else if time.Now().After(deadline) {
			t.Fatalf("chopin planner runs %d processes, want its agent alone: %v", len(kids), kids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// modelWaits counts the scripted model's requests of api left unanswered
// ("@chopin wait").
func (b *agentBench) modelWaits(t *testing.T, api string) int {
	t.Helper()
	f, err := os.Open(b.log)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var s struct{ API, Step string }
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.API == api && s.Step == "wait" {
			n++
		}
	}
	return n
}

// modelSteps are the scripted model's steps for api, one a line, for a
// failure.
func (b *agentBench) modelSteps(api string) string {
	raw, _ := os.ReadFile(b.log)
	var out strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		var s struct {
			At, API, Step string
			Decision      json.RawMessage
			Calls         []struct{ Name, Result string }
		}
		if json.Unmarshal([]byte(line), &s) != nil || s.API != api {
			continue
		}
		fmt.Fprintf(&out, "%s %s %.300s\n", s.At, s.Step, s.Decision)
		if n := len(s.Calls); n > 0 {
			fmt.Fprintf(&out, "    after %d calls, the last %s: %.300q\n", n, s.Calls[n-1].Name, s.Calls[n-1].Result)
		}
	}
	return out.String()
}

// waitInModel sends "@chopin wait" and returns once the agent's model
// request is held by the scripted server: the agent is mid-turn.
func (b *agentBench) waitInModel(t *testing.T, browser *apptest.Room, preset, id string) {
	t.Helper()
	before := b.modelWaits(t, modelAPI[preset])
	browser.Send(map[string]any{"type": "chat:send", "id": id, "text": "@chopin wait"})
	deadline := time.Now().Add(time.Minute)
	for b.modelWaits(t, modelAPI[preset]) == before {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never asked the model in the turn %s", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// planReply waits for the Planner's reply to end, answering the permission
// card of the agent's own command as a person does over the room socket;
// it returns the reply and the cards it answered.
func planReply(t testing.TB, browser *apptest.Room, preset string) (map[string]any, []permissionCard) {
	t.Helper()
	var cards []permissionCard
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		// An agent starting, or a model that thinks, sends nothing for a
		// while: longer than the room helper's reads wait.
		browser.Conn.SetReadDeadline(deadline)
		var m map[string]any
		if err := browser.Conn.ReadJSON(&m); err != nil {
			t.Fatalf("read room frame: %v", err)
		}
		switch m["type"] {
		case "decision:update":
			raw, _ := json.Marshal(m["decision"])
			var c permissionCard
			var status struct{ Status string }
			json.Unmarshal(raw, &c)
			json.Unmarshal(raw, &status)
			if status.Status != "open" {
				continue
			}
			cards = append(cards, c)
			label := ""
			for _, q := range c.Call.Params.Questions {
				for _, o := range q.Options {
					if o.Description == "allow once" && label == "" {
						label = o.Label
					}
				}
			}
			if label == "" {
				t.Fatalf("a card without an allow-once option: %s", raw)
			}
			answerOverSocket(t, browser, c.ID, map[string]any{"labels": []string{label}})
		case "chat:message":
			msg := m["message"].(map[string]any)
			if msg["role"] == "planner" && msg["status"] != "streaming" {
				return msg, cards
			}
		}
	}
	t.Fatal("no reply within 2 minutes")
	return nil, nil
}

func TestRealACPPlanners(t *testing.T) {
	b := startACPBench(t)
	var tm timings
	t.Cleanup(func() {
		t.Logf("ACP planner turns: %s", strings.Join(tm.runs, ", "))
		// Every request the agents made is one the scripted server knows.
		raw, _ := os.ReadFile(b.log)
		for _, line := range strings.Split(string(raw), "\n") {
			var s struct{ API, Method, Path, Error, Agent string }
			if json.Unmarshal([]byte(line), &s) == nil && (s.API == "unknown" || s.API == "error") {
				t.Errorf("the scripted model server could not answer %s %s from %q: %s", s.Method, s.Path, s.Agent, s.Error)
			}
		}
	})
	for _, preset := range []string{"claude", "codex", "gemini"} {
		t.Run(preset, func(t *testing.T) {
			t.Parallel()
			b.acpPreset(t, preset, &tm)
		})
	}
}

func (b *agentBench) acpPreset(t *testing.T, preset string, tm *timings) {
	title := "Planner over " + preset
	id, source := b.document(t, title)
	browser := b.ta.DialRoom(id)
	browser.T = t // a subtest's: the room helpers fail it, not the bench's test
	home := t.TempDir()
	p := b.startACPPlanner(t, preset, id, home)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the scripted model's steps for %s:\n%s", preset, b.modelSteps(modelAPI[preset]))
		}
	})
	p.waitAttached(t, b, id)
	folder := filepath.Join(b.ta.app.cfg.DataDir, "acp", "documents", id)
	var plan room.Plan

	// A turn: read the plan, the agent's own command once a person allows
	// it, the edit at the revision read, the reply.
	start := time.Now()
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin add a risks section"})
	r, cards := planReply(t, browser, preset)
	tm.add(preset, time.Since(start))
	if r["status"] != "done" || r["text"] != "I added a Risks section; the plan is at revision 1." {
		t.Errorf("reply %v (%s)", r["text"], failure(r))
	}
	if len(cards) != 1 {
		t.Errorf("%d permission cards, want 1 (the command's; Chopin's own tools need none): %+v", len(cards), cards)
	} else {
		q := cards[0].Call.Params.Questions[0]
		if q.Header != "Permission" || !strings.Contains(q.Question, "run a command") || !strings.Contains(q.Question, "risks-checked.txt") || cards[0].Block != room.NotInPlan {
			t.Errorf("the card: block %d, %+v", cards[0].Block, q)
		}
	}
	if _, err := os.Stat(filepath.Join(folder, scriptedFile)); err != nil {
		t.Errorf("the allowed command did not run in the document's folder: %v", err)
	}
	b.ta.Do("GET", "/api/channels/"+id+"/plan", nil).JSON(t, &plan)
	if want := source + "\n" + riskSection; plan.Source != want || plan.Revision != 1 {
		t.Errorf("the plan at revision %d:\n%s\nwant revision 1:\n%s", plan.Revision, plan.Source, want)
	}

	// The agent killed mid-turn: the turn fails, and the next @chopin
	// starts a new agent, which edits on.
	b.waitInModel(t, browser, preset, "m2")
	agent := p.agentOf(t)
	syscall.Kill(agent, syscall.SIGKILL)
	if r, _ := planReply(t, browser, preset); r["status"] != "failed" || !strings.Contains(failure(r), "exited during the turn") {
		t.Errorf("after the crash %v (%s)", r["status"], failure(r))
	}
	browser.Send(map[string]any{"type": "chat:send", "id": "m3", "text": "@chopin add a risks section without asking"})
	if r, _ := planReply(t, browser, preset); r["text"] != "I added a Risks section; the plan is at revision 2." {
		t.Errorf("after the crash, a new agent: %v (%s)", r["text"], failure(r))
	}
	if again := p.agentOf(t); again == agent {
		t.Errorf("the same agent %d answered after it was killed", agent)
	}

	// Stop mid-turn: the agent's prompt is cancelled, the turn stopped.
	b.waitInModel(t, browser, preset, "m4")
	b.ta.Do("POST", "/api/channels/"+id+"/planner/stop", nil)
	if r, _ := planReply(t, browser, preset); r["status"] != "stopped" {
		t.Errorf("after Stop %v (%s)", r["status"], failure(r))
	}
	// A person takes a moment to write again. claude-agent-acp 0.23.1 ends a
	// prompt sent at once after a cancelled one straight away, with no
	// answer (its interrupted query's last state comes late): docs/acp.md.
	time.Sleep(2 * time.Second)

	// SIGTERM mid-turn: chopin planner exits within seconds, leaving no
	// process of the agent's group behind.
	b.waitInModel(t, browser, preset, "m5")
	agent = p.agentOf(t)
	group, ok := procGroup(agent)
	if !ok || group == p.cmd.Process.Pid {
		t.Fatalf("the agent %d runs in group %d (chopin planner is %d)", agent, group, p.cmd.Process.Pid)
	}
	members := groupMembers(group)
	start = time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		t.Logf("--acp %s: chopin planner exited %s after SIGTERM (%v), its agent's group had %d processes", preset, time.Since(start).Round(time.Millisecond), err, len(members))
	case <-time.After(15 * time.Second):
		t.Fatalf("chopin planner did not exit within 15 s of SIGTERM")
	}
	deadline := time.Now().Add(apptest.Wait)
	for len(groupMembers(group)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := groupMembers(group); len(left) > 0 {
		t.Errorf("processes of the agent's group left behind: %v", describe(left))
	}
}

// describe names processes by their command lines, for a failure.
func describe(pids []int) []string {
	var out []string
	for _, pid := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")))
	}
	return out
}

// BenchmarkRealACPPlannerTurn measures a Planner turn through each preset
// against the scripted model's own time: "@chopin add a risks section
// without asking" (read_plan, edit_plan at the revision read, a reply),
// with every model request answered 200 ms late (SCRIPTED_DELAY_MS), as a
// fast model would. turn-ms is a turn from the person's message on the
// room socket to the finished reply in Chat, model-ms the time the turn's
// model requests spent in the scripted server, x-model their ratio. The
// agent is started and has loaded its tools before the timer runs. Run it
// with a fixed count: -benchtime 5x.
func BenchmarkRealACPPlannerTurn(b *testing.B) {
	b.Setenv("SCRIPTED_DELAY_MS", "200")
	bench := startACPBench(b)
	for _, preset := range []string{"claude", "codex", "gemini"} {
		b.Run(preset, func(b *testing.B) {
			id, _ := bench.document(b, fmt.Sprintf("Bench %s %d", preset, b.N))
			browser := bench.ta.DialRoom(id)
			browser.T = b
			p := bench.startACPPlanner(b, preset, id, b.TempDir())
			p.waitAttached(b, bench, id)
			turn := func(n int) (took, model time.Duration) {
				start := time.Now()
				browser.Send(map[string]any{"type": "chat:send", "id": fmt.Sprint("b", n), "text": "@chopin add a risks section without asking"})
				r, _ := planReply(b, browser, preset)
				took = time.Since(start)
				if r["status"] != "done" {
					b.Fatalf("turn %d: %v (%s)", n, r["text"], failure(r))
				}
				return took, bench.modelTime(b, modelAPI[preset], start)
			}
			turn(-1) // the agent starts, and loads Chopin's tools
			var turns, models time.Duration
			b.ResetTimer()
			for n := range b.N {
				took, model := turn(n)
				turns += took
				models += model
			}
			b.StopTimer()
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(ms(turns), "turn-ms/op")
			b.ReportMetric(ms(models), "model-ms/op")
			b.ReportMetric(float64(turns)/float64(models), "x-model")
			p.cmd.Process.Signal(syscall.SIGTERM)
			<-p.exited
		})
	}
}

// modelTime is the time the scripted server spent on api's requests since
// start: each log line's "ms".
func (b *agentBench) modelTime(t testing.TB, api string, since time.Time) time.Duration {
	t.Helper()
	raw, err := os.ReadFile(b.log)
	if err != nil {
		t.Fatal(err)
	}
	var total time.Duration
	for _, line := range strings.Split(string(raw), "\n") {
		var s struct {
			At  time.Time
			API string
			MS  int64
		}
		if json.Unmarshal([]byte(line), &s) == nil && s.API == api && !s.At.Before(since.Add(-time.Millisecond)) {
			total += time.Duration(s.MS) * time.Millisecond
		}
	}
	return total
}
