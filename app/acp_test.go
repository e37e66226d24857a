package app

// chopin planner --acp end to end: the real app, the real CLI, and a fake
// ACP agent written with acp-go-sdk's agent side, run as a process (this
// test binary, started again with fakeACPAgentEnv set). The agent reaches
// Chopin's host tools through the MCP server the bridge offers it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/version"
)

// fakeACPAgentEnv makes this test binary a fake ACP agent: "script" answers
// prompts by what they say, "silent" never answers initialize.
const fakeACPAgentEnv = "CHOPIN_TEST_FAKE_ACP_AGENT"

// fakeACPEventsEnv names a file the fake agent appends its sessions'
// events to: "new SESSION mcpServers=N", "prompt SESSION description=B
// schema=B", "close SESSION".
const fakeACPEventsEnv = "CHOPIN_TEST_FAKE_ACP_EVENTS"

// The stdio MCP entry of the planners these tests run is this test binary
// (TestFakeACPMCPStdio), which runs the hidden acp-mcp command.
var testACP = cli.ACPOptions{MCPStdio: []string{os.Args[0], "-test.run=^TestFakeACPMCPStdio$"}}

// TestFakeACPMCPStdio is not a test: it is the stdio MCP entry's process,
// what the chopin binary's hidden acp-mcp command runs.
func TestFakeACPMCPStdio(t *testing.T) {
	if os.Getenv(fakeACPAgentEnv) == "" {
		t.Skip("the stdio MCP entry runs only as a child process")
	}
	c := &cli.CLI{Local: Local{}, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	os.Exit(c.Run(context.Background(), []string{"acp-mcp"}))
}

// TestFakeACPAgent is not a test: it is the fake agent's process.
func TestFakeACPAgent(t *testing.T) {
	mode := os.Getenv(fakeACPAgentEnv)
	if mode == "" {
		t.Skip("the fake ACP agent runs only as a child process")
	}
	switch mode {
	case "silent":
		time.Sleep(time.Hour)
	case "stubborn":
		// The child of the "script-child" agent: it ignores every signal
		// but KILL, and holds the agent's stderr open.
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		time.Sleep(time.Hour)
	}
	a := &fakeAgent{load: mode == "script-load", stdio: mode == "script-stdio", auth: mode == "script-auth"}
	if mode == "script-child" {
		child := exec.Command(os.Args[0], "-test.run=^TestFakeACPAgent$")
		child.Env = append(os.Environ(), fakeACPAgentEnv+"=stubborn")
		child.Stderr = os.Stderr
		if err := child.Start(); err != nil {
			panic(err)
		}
		a.child = child.Process.Pid
	}
	a.mu.Lock() // the connection calls a before NewAgentSideConnection returns
	a.conn = sdk.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	done := a.conn.Done()
	a.mu.Unlock()
	<-done
	os.Exit(0)
}

type fakeAgent struct {
	conn  *sdk.AgentSideConnection
	load  bool // it offers loadSession
	stdio bool // it takes MCP servers over stdio only
	child int  // the process id of its stubborn child, in the script-child mode
	auth  bool // it needs signing in: session/new answers auth_required

	mu       sync.Mutex
	mcp      *mcp.ClientSession
	cancel   map[sdk.SessionId]chan struct{} // a waiting prompt's, by session
	sessions int                             // sessions opened with the MCP server
	isolated int                             // sessions opened without MCP servers
	model    string                          // the model the bridge set
	// clientInfo is the bridge's name and version, as initialize gave them
	clientInfo string
	cwd        string // the session's working directory
}

func (a *fakeAgent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (a *fakeAgent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	if p.ClientInfo != nil {
		a.mu.Lock()
		a.clientInfo = p.ClientInfo.Name + " " + p.ClientInfo.Version
		a.mu.Unlock()
	}
	var auth []sdk.AuthMethod
	if a.auth {
		auth = []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{Id: "chatgpt", Name: "Login with ChatGPT"}},
			{EnvVar: &sdk.AuthMethodEnvVarInline{Id: "openai-api-key", Name: "Use OPENAI_API_KEY", Type: "env_var",
				Vars: []sdk.AuthEnvVar{{Name: "OPENAI_API_KEY"}}}}}
	}
	return sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber, AuthMethods: auth, AgentCapabilities: sdk.AgentCapabilities{
		LoadSession:         a.load,
		McpCapabilities:     sdk.McpCapabilities{Http: !a.stdio},
		PromptCapabilities:  sdk.PromptCapabilities{Image: true},
		SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
	}}, nil
}

// event appends a line to the events file, when the test named one.
func (a *fakeAgent) event(format string, args ...any) {
	name := os.Getenv(fakeACPEventsEnv)
	if name == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, format+"\n", args...)
	f.Close()
}

func (a *fakeAgent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch := a.cancel[p.SessionId]; ch != nil {
		close(ch)
		delete(a.cancel, p.SessionId)
	}
	return nil
}

func (a *fakeAgent) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.event("close %s", p.SessionId)
	return sdk.CloseSessionResponse{}, nil
}

func (a *fakeAgent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, nil
}

func (a *fakeAgent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, nil
}

func (a *fakeAgent) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if v := p.ValueId; v != nil && v.ConfigId == "model" {
		a.mu.Lock()
		a.model = string(v.Value)
		a.mu.Unlock()
	}
	return sdk.SetSessionConfigOptionResponse{}, nil
}

func (a *fakeAgent) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, nil
}

type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// connect connects to the MCP server the bridge offers: over HTTP, or in
// the stdio mode by running the stdio entry's command.
func (a *fakeAgent) connect(servers []sdk.McpServer) error {
	if len(servers) != 1 {
		return fmt.Errorf("want one MCP server, got %+v", servers)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "fake-agent", Version: "1"}, nil)
	var transport mcp.Transport
	switch e := servers[0]; {
	case e.Http != nil && !a.stdio:
		transport = &mcp.StreamableClientTransport{Endpoint: e.Http.Url,
			HTTPClient: &http.Client{Transport: headerTransport{e.Http.Headers[0].Name, e.Http.Headers[0].Value}}}
	case e.Stdio != nil && a.stdio:
		cmd := exec.Command(e.Stdio.Command, e.Stdio.Args...)
		cmd.Env = os.Environ()
		for _, v := range e.Stdio.Env {
			cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
		}
		transport = &mcp.CommandTransport{Command: cmd}
	default:
		return fmt.Errorf("unexpected MCP server entry %+v", e)
	}
	s, err := c.Connect(context.Background(), transport, nil)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.mcp = s
	a.mu.Unlock()
	return nil
}

// LoadSession is offered only in the script-load mode (Initialize).
func (a *fakeAgent) LoadSession(_ context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if !a.load {
		return sdk.LoadSessionResponse{}, sdk.NewMethodNotFound("session/load")
	}
	a.mu.Lock()
	a.cwd = p.Cwd
	a.mu.Unlock()
	return sdk.LoadSessionResponse{}, a.connect(p.McpServers)
}

// NewSession connects to the MCP server the bridge offers. A session
// offered none (an isolated one) is numbered apart, so "sessions" counts
// only the others.
func (a *fakeAgent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if a.auth {
		return sdk.NewSessionResponse{}, sdk.NewAuthRequired(nil)
	}
	if len(p.McpServers) == 0 {
		a.mu.Lock()
		a.isolated++
		sid := sdk.SessionId(fmt.Sprintf("acp-isolated-%d", a.isolated))
		a.mu.Unlock()
		a.event("new %s mcpServers=0", sid)
		return sdk.NewSessionResponse{SessionId: sid}, nil
	}
	if err := a.connect(p.McpServers); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a.mu.Lock()
	a.cwd = p.Cwd
	a.sessions++
	n := a.sessions
	a.mu.Unlock()
	sid := sdk.SessionId(fmt.Sprintf("acp-session-%d", n))
	a.event("new %s mcpServers=%d", sid, len(p.McpServers))
	go func() {
		time.Sleep(50 * time.Millisecond)
		a.say(context.Background(), sid, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
			AvailableCommands: []sdk.AvailableCommand{{Name: "review", Description: "Review the plan"}}}})
	}()
	models := sdk.SessionConfigSelectOptionsUngrouped{{Value: "fast", Name: "Fast"}, {Value: "deep", Name: "Deep"}}
	return sdk.NewSessionResponse{SessionId: sid, ConfigOptions: []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: "model", Name: "Model", Type: "select", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryModel), CurrentValue: "fast",
		Options: sdk.SessionConfigSelectOptions{Ungrouped: &models}}}}}, nil
}

func (a *fakeAgent) client() *sdk.AgentSideConnection {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conn
}

func (a *fakeAgent) say(ctx context.Context, sid sdk.SessionId, u sdk.SessionUpdate) {
	_ = a.client().SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: u})
}

func (a *fakeAgent) callTool(ctx context.Context, name string, args any) (string, bool) {
	a.mu.Lock()
	s := a.mcp
	a.mu.Unlock()
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error(), true
	}
	return r.Content[0].(*mcp.TextContent).Text, r.IsError
}

// descriptionMaterialRE finds the material of a description prompt.
var descriptionMaterialRE = regexp.MustCompile(`(?s)<material>\n(.*)\n</material>`)

// describe answers a description prompt: {"description": "Plan for <the
// material's first line>"} when the prompt's last block asks for only JSON
// of the description schema, else that phrase as plain text (which Chopin
// refuses). On the way it shows a tool call and a plan, which an isolated
// session must not forward as rows (they would fail its turn).
func (a *fakeAgent) describe(ctx context.Context, p sdk.PromptRequest, material string) (sdk.PromptResponse, error) {
	last := p.Prompt[len(p.Prompt)-1].Text.Text
	schema := strings.Contains(last, "only JSON") && strings.Contains(last, `"required":["description"]`)
	a.event("prompt %s description=true schema=%t", p.SessionId, schema)
	a.say(ctx, p.SessionId, sdk.UpdatePlan(sdk.PlanEntry{Content: "Describe", Status: sdk.PlanEntryStatusInProgress}))
	a.say(ctx, p.SessionId, sdk.StartToolCall("look-1", "Look around", sdk.WithStartKind(sdk.ToolKindRead)))
	a.say(ctx, p.SessionId, sdk.UpdateToolCall("look-1", sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted)))
	first, _, _ := strings.Cut(material, "\n")
	if strings.HasPrefix(first, "# Wait") {
		// Waits for session/cancel in this session.
		ch := make(chan struct{})
		a.mu.Lock()
		if a.cancel == nil {
			a.cancel = map[sdk.SessionId]chan struct{}{}
		}
		a.cancel[p.SessionId] = ch
		a.mu.Unlock()
		a.event("waiting %s", p.SessionId)
		<-ch
		a.event("cancelled %s", p.SessionId)
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	phrase := "Plan for " + strings.TrimPrefix(first, "# ")
	if schema {
		phrase = descriptionJSON(phrase)
	}
	half := len(phrase) / 2
	a.say(ctx, p.SessionId, sdk.UpdateAgentMessageText(phrase[:half]))
	a.say(ctx, p.SessionId, sdk.UpdateAgentMessageText(phrase[half:]))
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// Prompt acts on the last words of the prompt; a description prompt (one
// with material) is answered by describe, in whatever session it comes.
func (a *fakeAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	for _, b := range p.Prompt {
		if b.Text == nil {
			continue
		}
		if m := descriptionMaterialRE.FindStringSubmatch(b.Text.Text); m != nil {
			return a.describe(ctx, p, m[1])
		}
	}
	text := p.Prompt[len(p.Prompt)-1].Text.Text
	sid := p.SessionId
	a.event("prompt %s description=false", sid)
	end := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	switch {
	case strings.HasSuffix(text, "add a risks section"):
		a.say(ctx, sid, sdk.UpdateAgentThoughtText("Read the plan first."))
		a.say(ctx, sid, sdk.UpdatePlan(sdk.PlanEntry{Content: "Read the plan", Status: sdk.PlanEntryStatusInProgress},
			sdk.PlanEntry{Content: "Add risks", Status: sdk.PlanEntryStatusPending}))
		a.say(ctx, sid, sdk.StartToolCall("mcp-1", "mcp__chopin__read_plan", sdk.WithStartKind(sdk.ToolKindOther)))
		plan, isErr := a.callTool(ctx, "read_plan", map[string]any{})
		if isErr || !strings.Contains(plan, "revision: 0") {
			return end, fmt.Errorf("read_plan: %s", plan)
		}
		a.say(ctx, sid, sdk.UpdateToolCall("mcp-1", sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted)))
		a.say(ctx, sid, sdk.StartToolCall("own-1", "Read notes.md", sdk.WithStartKind(sdk.ToolKindRead), sdk.WithStartRawInput(map[string]any{"path": "notes.md"})))
		a.say(ctx, sid, sdk.UpdateToolCall("own-1", sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("three notes"))})))
		out, isErr := a.callTool(ctx, "edit_plan", map[string]any{"revision": 0, "operations": []any{map[string]any{"op": "insert_root", "content": "## Risks\n\nNone yet."}}})
		if isErr {
			return end, fmt.Errorf("edit_plan: %s", out)
		}
		a.say(ctx, sid, sdk.UpdatePlan(sdk.PlanEntry{Content: "Read the plan", Status: sdk.PlanEntryStatusCompleted},
			sdk.PlanEntry{Content: "Add risks", Status: sdk.PlanEntryStatusCompleted}))
		a.say(ctx, sid, sdk.UpdateAgentMessageText("I added "))
		a.say(ctx, sid, sdk.UpdateAgentMessageText("a Risks section."))
	case strings.HasSuffix(text, "may I"):
		r, err := a.client().RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sid,
			ToolCall: sdk.ToolCallUpdate{ToolCallId: "edit-1", Title: sdk.Ptr("Edit main.go")},
			Options: []sdk.PermissionOption{{OptionId: "yes-once", Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
				{OptionId: "no", Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce}}})
		if err != nil {
			return end, err
		}
		answer := "cancelled"
		if r.Outcome.Selected != nil {
			answer = string(r.Outcome.Selected.OptionId)
		}
		a.say(ctx, sid, sdk.UpdateAgentMessageText("Permission: "+answer))
	case strings.HasSuffix(text, "edit after permission"):
		return a.editAfterPermission(ctx, sid)
	case strings.HasSuffix(text, "run the tests twice"):
		first := a.askPermission(ctx, sid, "tests-1", "npm test", sdk.ToolKindExecute, map[string]any{"command": "npm test"})
		second := a.askPermission(ctx, sid, "tests-2", "npm test", sdk.ToolKindExecute, map[string]any{"command": "npm test"})
		a.say(ctx, sid, sdk.UpdateAgentMessageText("first: "+first+", second: "+second))
	case strings.HasSuffix(text, "wait"):
		ch := make(chan struct{})
		a.mu.Lock()
		if a.cancel == nil {
			a.cancel = map[sdk.SessionId]chan struct{}{}
		}
		a.cancel[sid] = ch
		a.mu.Unlock()
		a.say(ctx, sid, sdk.UpdateAgentMessageText("Waiting"))
		<-ch
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case strings.HasSuffix(text, "crash"):
		a.say(ctx, sid, sdk.UpdateAgentMessageText("Going down"))
		time.Sleep(100 * time.Millisecond)
		os.Exit(3)
	case strings.Contains(text, "read "):
		path := text[strings.LastIndex(text, "read ")+len("read "):]
		r, err := a.client().ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sid, Path: filepath.Join(a.cwd, path)})
		if err != nil {
			a.say(ctx, sid, sdk.UpdateAgentMessageText("refused: "+err.Error()))
		} else {
			a.say(ctx, sid, sdk.UpdateAgentMessageText("read: "+r.Content))
		}
	case strings.HasSuffix(text, "refuse"):
		return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil
	case strings.HasSuffix(text, "sessions"):
		a.mu.Lock()
		n := a.sessions
		a.mu.Unlock()
		child := ""
		if a.child != 0 {
			child = fmt.Sprintf(", child %d", a.child)
		}
		a.say(ctx, sid, sdk.UpdateAgentMessageText(fmt.Sprintf("%s, session %d, pid %d%s", sid, n, os.Getpid(), child)))
	case strings.HasSuffix(text, "how do you run"):
		// The command line after the test binary's own flags, the folder it
		// runs in and the session's, and Gemini CLI's trust.
		var args []string
		if i := slices.Index(os.Args, "--"); i >= 0 {
			args = os.Args[i+1:]
		}
		wd, _ := os.Getwd()
		a.mu.Lock()
		cwd := a.cwd
		a.mu.Unlock()
		a.say(ctx, sid, sdk.UpdateAgentMessageText(fmt.Sprintf("args %q, dir %s, session dir %s, trust %q",
			args, wd, cwd, os.Getenv("GEMINI_CLI_TRUST_WORKSPACE"))))
	case strings.HasSuffix(text, "who asks"):
		a.mu.Lock()
		client, server := a.clientInfo, a.mcp.InitializeResult().ServerInfo
		a.mu.Unlock()
		a.say(ctx, sid, sdk.UpdateAgentMessageText(fmt.Sprintf("client %s, MCP server %s %s", client, server.Name, server.Version)))
	case strings.HasSuffix(text, "model"):
		a.mu.Lock()
		m := a.model
		a.mu.Unlock()
		a.say(ctx, sid, sdk.UpdateAgentMessageText("model "+m))
	}
	return end, nil
}

// permissionOptions are the options the fake agent's permission requests
// offer, as Claude Code's adapter does.
var permissionOptions = []sdk.PermissionOption{
	{OptionId: "allow_always", Name: "Always Allow", Kind: sdk.PermissionOptionKindAllowAlways},
	{OptionId: "allow", Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
	{OptionId: "reject", Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
}

// askPermission asks the bridge's permission for a tool call and returns
// the option chosen, or "cancelled".
func (a *fakeAgent) askPermission(ctx context.Context, sid sdk.SessionId, id, title string, kind sdk.ToolKind, input any) string {
	r, err := a.client().RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sid,
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Title: sdk.Ptr(title), Kind: sdk.Ptr(kind), RawInput: input},
		Options:  permissionOptions})
	switch {
	case err != nil:
		return "error " + err.Error()
	case r.Outcome.Selected != nil:
		return string(r.Outcome.Selected.OptionId)
	}
	return "cancelled"
}

// revisionRE finds the revision in read_plan's header.
var revisionRE = regexp.MustCompile(`(?m)^revision: (\d+)$`)

// editAfterPermission is what Claude Code's and Codex's adapters do: they
// ask permission for Chopin's own host tools too, and the agent's own
// command comes between reading the plan and editing it. The edit is made
// at the revision read before the command's permission was asked.
func (a *fakeAgent) editAfterPermission(ctx context.Context, sid sdk.SessionId) (sdk.PromptResponse, error) {
	end := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	host := a.askPermission(ctx, sid, "mcp-read", "mcp__chopin__read_plan", sdk.ToolKindOther, map[string]any{})
	plan, isErr := a.callTool(ctx, "read_plan", map[string]any{})
	m := revisionRE.FindStringSubmatch(plan)
	if isErr || m == nil {
		return end, fmt.Errorf("read_plan: %s", plan)
	}
	var revision int
	fmt.Sscan(m[1], &revision)
	own := a.askPermission(ctx, sid, "run-tests", "npm test", sdk.ToolKindExecute, map[string]any{"command": "npm test", "description": "Run the tests"})
	a.askPermission(ctx, sid, "mcp-edit", "mcp__chopin__edit_plan", sdk.ToolKindOther, map[string]any{})
	out, isErr := a.callTool(ctx, "edit_plan", map[string]any{"revision": revision, "operations": []any{map[string]any{"op": "insert_root", "content": "## Tests\n\nnpm test passes."}}})
	edit := "edited"
	if isErr {
		edit = "refused: " + out
	}
	a.say(ctx, sid, sdk.UpdateAgentMessageText(fmt.Sprintf("host: %s, own: %s, %s", host, own, edit)))
	return end, nil
}

// acpCLI starts chopin planner --acp exec with this binary as the agent.
func (ta *testApp) runACPPlanner(t *testing.T, mode, docURL string) *plannerCLI {
	t.Helper()
	t.Setenv(fakeACPAgentEnv, mode)
	cli := runPlanner(t, ta.plannerEnv(nil), "--acp", "exec", docURL, "--", os.Args[0], "-test.run=^TestFakeACPAgent$")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chopin planner --acp (%s) stdout:\n%s\nstderr:\n%s", mode, cli.stdout, cli.stderr)
		}
	})
	return cli
}

// sessionsAfterAttach waits for the Planner to attach, then asks the fake
// agent which session and process answer (message id).
func (ta *testApp) sessionsAfterAttach(browser *apptest.Room, channelID, id string) string {
	ta.waitAttached(browser, channelID)
	return fmt.Sprint(reply(browser, id, "@chopin sessions")["text"])
}

// waitAttached waits until the document's Planner is attached: the tab's
// socket says so, or it was already when the tab joined.
func (ta *testApp) waitAttached(browser *apptest.Room, channelID string) {
	for {
		var st struct{ State string }
		ta.Do("GET", "/api/channels/"+channelID+"/planner", nil).JSON(ta.T, &st)
		if st.State == "attached" {
			return
		}
		browser.Until("planner:status")
	}
}

// reply sends text to Chat and waits for the Planner's finished reply.
func reply(browser *apptest.Room, id, text string) map[string]any {
	browser.Send(map[string]any{"type": "chat:send", "id": id, "text": text})
	var r map[string]any
	for r == nil || r["status"] == "streaming" {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" {
			r = m
		}
	}
	return r
}

// TestACPPlannerAnswersInChat: a person's @chopin becomes the agent's prompt;
// the agent reads and edits the plan through the MCP server, its own tool
// call is a row, its MCP call is not shown twice, and its reply streams.
func TestACPPlannerAnswersInChat(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	cli := ta.runACPPlanner(t, "script", ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)

	r := reply(browser, "m1", "@chopin add a risks section")
	if r["status"] != "done" || r["text"] != "I added a Risks section." {
		t.Fatalf("reply %v", r)
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Launch\n\n## Risks\n\nNone yet.\n" {
		t.Errorf("plan %q", plan.Source)
	}
	var list struct{ Messages []room.Message }
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	var details room.ReplyDetails
	json.Unmarshal(list.Messages[len(list.Messages)-1].Details, &details)
	// The agent's notifications and its MCP calls take different ways to
	// Chopin, so the rows' order is not fixed.
	var rows []string
	for _, tool := range details.Tools {
		rows = append(rows, tool.Name+":"+string(tool.Status))
		if tool.Name == "agent_read" && !strings.Contains(string(tool.Input), `"title":"Read notes.md"`) {
			t.Errorf("the agent's own row %s", tool.Input)
		}
	}
	slices.Sort(rows)
	if details.Reasoning != "Read the plan first." || strings.Join(rows, " ") != "agent_read:done edit_plan:done read_plan:done" {
		t.Errorf("reasoning %q, rows %v", details.Reasoning, rows)
	}

	// The agent's plan is a run card whose stages are its entries.
	var planner struct {
		Runs []struct {
			Name, Status string
			Stages       []struct{ Name, Status string }
		}
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &planner)
	if len(planner.Runs) != 1 || planner.Runs[0].Status != "finished" || len(planner.Runs[0].Stages) != 2 ||
		planner.Runs[0].Stages[1].Name != "Add risks" || planner.Runs[0].Stages[1].Status != "completed" {
		t.Errorf("runs %+v", planner.Runs)
	}

	// The catalog lists the agent's models and commands; a person's choice
	// is set with session/set_config_option before the prompt.
	var model struct {
		Models   []struct{ ID string }
		Commands []struct{ Name string }
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner/model", nil).JSON(t, &model)
	if got := model.Models; len(got) != 2 || got[0].ID != "fast" || got[1].ID != "deep" {
		t.Errorf("catalog %s", ta.Do("GET", "/api/channels/"+ch.ID+"/planner/model", nil).Body)
	}
	if r := ta.Do("PUT", "/api/channels/"+ch.ID+"/planner/model", map[string]any{"model": "deep"}); r.Status != http.StatusOK {
		t.Fatalf("choose deep: %d %s", r.Status, r.Body)
	}
	if r := reply(browser, "m3", "@chopin model"); r["text"] != "model deep" {
		t.Errorf("model turn %v", r)
	}
	// available_commands_update comes after the session opened: read the
	// state, and wait for the next chat:model while it lacks the command.
	for {
		ta.Do("GET", "/api/channels/"+ch.ID+"/planner/model", nil).JSON(t, &model)
		if len(model.Commands) > 0 {
			break
		}
		browser.Until("chat:model")
	}
	if len(model.Commands) != 1 || model.Commands[0].Name != "review" {
		t.Errorf("commands %+v", model.Commands)
	}

	// The agent keeps its session across turns.
	if r := reply(browser, "m2", "@chopin sessions"); !strings.HasPrefix(fmt.Sprint(r["text"]), "acp-session-1, session 1, pid ") {
		t.Errorf("second turn %v", r)
	}
	// The bridge names this build's version (chopin --version's) to the
	// agent, as its clientInfo and its MCP server's serverInfo.
	v := version.Build().Version
	if r := reply(browser, "m4", "@chopin who asks"); r["text"] != "client chopin "+v+", MCP server chopin "+v {
		t.Errorf("versions %v, want %s", r["text"], v)
	}
	if code := cli.stop(t); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, cli.stderr)
	}
}

// TestACPPlannerWritesDescriptions: a generated description goes through an
// ACP agent end to end. Each isolated session is an ACP session of its own,
// opened without MCP servers and closed when Chopin destroys it; its prompt
// asks for only JSON of the schema; the agent's tool call and plan there are
// not forwarded; a job stopped by a newer edit cancels its prompt with
// session/cancel in that session; and the document's Planner session never
// sees a description prompt, before or after a Chat turn.
func TestACPPlannerWritesDescriptions(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	t.Setenv(fakeACPEventsEnv, events)
	ta := startAppWith(t, describeConfig(t, 50*time.Millisecond))
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	cli := ta.runACPPlanner(t, "script", ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)

	if r := reply(browser, "m1", "@chopin sessions"); !strings.HasPrefix(fmt.Sprint(r["text"]), "acp-session-1, session 1, pid ") {
		t.Errorf("Chat turn %v", r)
	}
	rev := ta.putPlan(t, ch.ID, 0, "# Moving storage to SQLite\n\nOne file, WAL mode.\n")
	eventually(t, "the description", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Moving storage to SQLite"
	})
	if hits := ta.list(t, "sqlite"); len(hits) != 1 || descriptionOf(hits[0]) != "Plan for Moving storage to SQLite" {
		t.Errorf("listing: %+v", hits)
	}
	// The Planner session is the same one after the description.
	if r := reply(browser, "m2", "@chopin sessions"); !strings.HasPrefix(fmt.Sprint(r["text"]), "acp-session-1, session 1, pid ") {
		t.Errorf("Chat turn after the description %v", r)
	}
	// A description under way is stopped by the next edit's job: its
	// session gets session/cancel.
	rev = ta.putPlan(t, ch.ID, rev, "# Wait for it\n")
	var waiting string
	eventually(t, "the agent waiting in a description prompt", func() bool {
		b, _ := os.ReadFile(events)
		if i := strings.Index(string(b), "waiting "); i >= 0 {
			waiting, _, _ = strings.Cut(string(b[i+len("waiting "):]), "\n")
			return true
		}
		return false
	})
	ta.putPlan(t, ch.ID, rev, "# Replicating to Postgres\n\nLater.\n")
	eventually(t, "the second description", func() bool {
		return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Replicating to Postgres"
	})

	// Read the agent's events once every session that was prompted for a
	// description was closed.
	var lines []string
	eventually(t, "the isolated sessions closed", func() bool {
		b, _ := os.ReadFile(events)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		prompted, closed := map[string]bool{}, map[string]bool{}
		for _, l := range lines {
			f := strings.Fields(l)
			switch {
			case len(f) > 2 && f[0] == "prompt" && f[2] == "description=true":
				prompted[f[1]] = true
			case len(f) == 2 && f[0] == "close":
				closed[f[1]] = true
			}
		}
		for s := range prompted {
			if !closed[s] {
				return false
			}
		}
		return len(prompted) >= 3
	})
	if !slices.Contains(lines, "cancelled "+waiting) || waiting == "acp-session-1" {
		t.Errorf("the waiting description prompt in %s was not cancelled", waiting)
	}
	servers := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		switch f[0] {
		case "new":
			servers[f[1]] = f[2]
		case "prompt":
			if f[2] != "description=true" {
				continue
			}
			if f[1] == "acp-session-1" || servers[f[1]] != "mcpServers=0" {
				t.Errorf("a description prompt went to %s (%s)", f[1], servers[f[1]])
			}
			if len(f) != 4 || f[3] != "schema=true" {
				t.Errorf("a description prompt without the JSON line: %s", l)
			}
		case "close":
			if f[1] == "acp-session-1" {
				t.Errorf("the Planner session was closed")
			}
		}
	}
	if servers["acp-session-1"] != "mcpServers=1" {
		t.Errorf("the Planner session: %s", servers["acp-session-1"])
	}
	if t.Failed() {
		t.Logf("agent events:\n%s", strings.Join(lines, "\n"))
	}
	cli.stop(t)
}

// TestACPPlannerPermissionStopCrash: a permission request is a Decision
// whose answer reaches the agent; Stop cancels the prompt; a stop reason
// other than the end fails the turn with a sentence; an agent that crashes
// mid-turn fails it, and the next @chopin starts a new agent.
func TestACPPlannerPermissionStopCrash(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	cli := ta.runACPPlanner(t, "script", ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)

	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin may I"})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("planner stdout:\n%s\nstderr:\n%s", cli.stdout, cli.stderr)
		}
	})
	card := browser.Until("decision:update")["decision"].(map[string]any)
	raw, _ := json.Marshal(card)
	if !strings.Contains(string(raw), `"label":"Allow"`) || !strings.Contains(string(raw), `allow once`) || !strings.Contains(string(raw), "Edit main.go") {
		t.Errorf("decision %s", raw)
	}
	resp := ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+card["id"].(string)+"/answer",
		map[string]any{"labels": []string{"Allow"}})
	if resp.Status != http.StatusOK {
		t.Fatalf("answer: %d %s", resp.Status, resp.Body)
	}
	var r map[string]any
	for r == nil || r["status"] == "streaming" {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" {
			r = m
		}
	}
	if r["text"] != "Permission: yes-once" {
		t.Errorf("after the answer %v", r)
	}

	if r := reply(browser, "m2", "@chopin refuse"); r["status"] != "failed" || !strings.Contains(failure(r), "The agent refused to go on with this request.") {
		t.Errorf("refusal %v", r)
	}

	// Stop: session/cancel, and the turn ends stopped.
	browser.Send(map[string]any{"type": "chat:send", "id": "m3", "text": "@chopin wait"})
	browser.Until("chat:delta") // "Waiting": the agent is in its prompt
	ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil)
	for {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" && m["status"] != "streaming" {
			if m["status"] != "stopped" {
				t.Errorf("after Stop %v", m)
			}
			break
		}
	}

	r = reply(browser, "m4", "@chopin crash")
	if r["status"] != "failed" || !strings.Contains(failure(r), "exited during the turn") {
		t.Errorf("crash %v", r)
	}
	if r := reply(browser, "m5", "@chopin sessions"); !strings.HasPrefix(fmt.Sprint(r["text"]), "acp-session-1, session 1, pid ") {
		t.Errorf("after the crash %v", r)
	}
	cli.stop(t)
}

// TestACPPlannerSilentAgent: an agent that never answers initialize is a
// clear message on stderr, and the turn that waited fails with it.
func TestACPPlannerSilentAgent(t *testing.T) {
	defer func(d time.Duration) { testACP.InitializeTimeout = d }(testACP.InitializeTimeout)
	testACP.InitializeTimeout = 300 * time.Millisecond
	ta, ch, browser := startWithLaunch(t)
	cli := ta.runACPPlanner(t, "silent", ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)
	r := reply(browser, "m1", "@chopin hello")
	if r["status"] != "failed" || !strings.Contains(failure(r), "did not answer initialize within 300ms") {
		t.Errorf("turn %v", r)
	}
	cli.stop(t)
	if !strings.Contains(cli.stderr.String(), "did not answer initialize within 300ms") {
		t.Errorf("stderr:\n%s", cli.stderr)
	}
}

// TestACPPlannerAgentNeedsSignIn: an agent that answers session/new with
// auth_required fails the turn with what to do, naming the ways it offers.
func TestACPPlannerAgentNeedsSignIn(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	cli := ta.runACPPlanner(t, "script-auth", ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)
	const want = "needs you to sign in first (it offers: Login with ChatGPT; Use OPENAI_API_KEY (OPENAI_API_KEY)). Sign in with the agent's own command, or set its key in the planner's environment, then @chopin again."
	if r := reply(browser, "m1", "@chopin hello"); r["status"] != "failed" || !strings.Contains(failure(r), want) {
		t.Errorf("turn %v", r)
	}
	cli.stop(t)
}

// failure is why a failed reply failed.
func failure(m map[string]any) string {
	d, _ := m["details"].(map[string]any)
	s, _ := d["error"].(string)
	return s
}

// TestACPPlannerSessions: the agent keeps its process and session while the
// link to Chopin is down; after the bridge itself restarts, an agent with
// loadSession gets session/load of the session it had, and one without
// starts a new session.
func TestACPPlannerSessions(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	docURL := ch.ID // its URL names the port, which changes with the restart
	browser := ta.DialRoom(ch.ID)
	cli := ta.runACPPlanner(t, "script-load", docURL)
	first := ta.sessionsAfterAttach(browser, ch.ID, "m1")
	if !strings.HasPrefix(first, "acp-session-1, session 1, pid ") {
		t.Fatalf("first turn %q", first)
	}

	// Chopin restarts: the link drops and comes back; the same process
	// answers in the same session.
	ta.Stop()
	ta = startAppWith(t, ta.app.cfg)
	browser = ta.DialRoom(ch.ID)
	ta.waitAttached(browser, ch.ID)
	if r := reply(browser, "m2", "@chopin sessions"); fmt.Sprint(r["text"]) != first {
		// The whole reply: a failed turn says why in its details.
		t.Errorf("after the link dropped %v, want the text %q", r, first)
	}
	var model struct{ Models []struct{ ID string } }
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner/model", nil).JSON(t, &model)
	if len(model.Models) != 2 {
		t.Errorf("the catalog after the link came back: %+v", model)
	}

	// The bridge restarts: session/load of the session it kept.
	cli.stop(t)
	cli = ta.runACPPlanner(t, "script-load", docURL)
	loaded := ta.sessionsAfterAttach(browser, ch.ID, "m3")
	if !strings.HasPrefix(loaded, "acp-session-1, session 0, pid ") || loaded == first {
		t.Errorf("after the bridge restarted %q", loaded)
	}

	// Without loadSession: a new session.
	cli.stop(t)
	cli = ta.runACPPlanner(t, "script", docURL)
	fresh := ta.sessionsAfterAttach(browser, ch.ID, "m4")
	if !strings.HasPrefix(fresh, "acp-session-1, session 1, pid ") || fresh == first {
		t.Errorf("an agent without loadSession %q", fresh)
	}
	cli.stop(t)
}

// TestACPPlannerCheckoutReads: the agent's working directory is the
// repository's checkout; it reads a file there, masked, but nothing under
// .git and nothing a link leads out to. In the stdio mode the agent reaches
// the host tools through the stdio entry (the hidden acp-mcp command).
func TestACPPlannerCheckoutReads(t *testing.T) {
	ta := startApp(t)
	checkout := gitCheckout(t, "")
	os.WriteFile(filepath.Join(checkout, "notes.md"), []byte("clone https://alice:hunter2@host/x.git\n"), 0o600)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	os.WriteFile(outside, []byte("outside"), 0o600)
	os.Symlink(outside, filepath.Join(checkout, "link.txt"))
	if r := ta.Do("POST", "/api/repositories", map[string]any{"name": "octo/plans", "path": checkout}); r.Status != http.StatusCreated {
		t.Fatalf("add repository: %d %s", r.Status, r.Body)
	}
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	cli := ta.runACPPlanner(t, "script-stdio", ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)

	if r := reply(browser, "m1", "@chopin read notes.md"); r["text"] != "read: clone https://[redacted]@host/x.git\n" {
		t.Errorf("notes.md: %v", r)
	}
	for i, path := range []string{".git/config", "link.txt", "../" + filepath.Base(filepath.Dir(outside)) + "/outside.txt"} {
		if r := reply(browser, fmt.Sprint("m", i+2), "@chopin read "+path); !strings.HasPrefix(fmt.Sprint(r["text"]), "refused: ") {
			t.Errorf("%s: %v", path, r)
		}
	}
	// Over the stdio entry, the host tools work as over HTTP.
	if r := reply(browser, "m9", "@chopin add a risks section"); r["text"] != "I added a Risks section." {
		t.Errorf("over stdio: %v", r)
	}
	cli.stop(t)
}

// TestACPPlannerCommandErrors: what a person reads when --acp names no agent
// it knows, or an agent whose command is missing.
func TestACPPlannerCommandErrors(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	toml := "[[acp_agent]]\nname = \"mine\"\ncommand = [\"/no/such/acp-agent\", \"--acp\"]\n"
	if err := os.WriteFile(filepath.Join(ta.app.cfg.ConfigDir, "chopin.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown agent", []string{"--acp", "nope", ch.ID},
			"chopin planner: --acp nope: no such agent; name one of claude, codex, gemini, mine, an [[acp_agent]] of chopin.toml, or exec\n"},
		{"exec without a command", []string{"--acp", "exec", ch.ID},
			"chopin planner: --acp exec needs the agent's command line after \"--\", such as: chopin planner --acp exec DOCUMENT -- my-agent --acp\n"},
		{"a command after a preset", []string{"--acp", "claude", ch.ID, "--", "x"},
			"chopin planner: a command line after \"--\" goes with --acp exec, not --acp claude\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli := runPlanner(t, ta.plannerEnv(nil), tc.args...)
			if code := cli.wait(t); code != 2 || cli.stderr.String() != tc.want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2, stderr:\n%s", code, cli.stderr, tc.want)
			}
		})
	}

	// An agent of chopin.toml whose command is missing: said at attach, and
	// the turn that waits for it fails with the same words.
	browser := ta.DialRoom(ch.ID)
	cli := runPlanner(t, ta.plannerEnv(nil), "--acp", "mine", ch.ID)
	ta.waitAttached(browser, ch.ID)
	const missing = `The agent's command "/no/such/acp-agent" was not found on this computer.`
	if r := reply(browser, "m1", "@chopin hello"); r["status"] != "failed" || !strings.HasPrefix(failure(r), missing) {
		t.Errorf("turn %v", r)
	}
	cli.stop(t)
	if !strings.Contains(cli.stderr.String(), "chopin planner: Launch: "+missing) {
		t.Errorf("stderr:\n%s", cli.stderr)
	}
}

func TestConfigACPAgents(t *testing.T) {
	dir := t.TempDir()
	file := "[[acp_agent]]\nname = \"mine\"\ncommand = [\"my-agent\", \"--acp\"]\n\n[[acp_agent]]\nname = \"Bad Name\"\ncommand = [\"x\"]\n\n[[acp_agent]]\nname = \"empty\"\n"
	os.WriteFile(filepath.Join(dir, "chopin.toml"), []byte(file), 0o600)
	env := map[string]string{"CHOPIN_CONFIG_DIR": dir}
	_, err := config.Load(config.Flags{}, func(k string) string { return env[k] })
	got := fmt.Sprint(err)
	for _, want := range []string{
		`chopin.toml:6: name = "Bad Name": must be 1 to 40 lowercase letters`,
		`chopin.toml:9: [[acp_agent]] "empty" needs command`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("config error lacks %q:\n%s", want, got)
		}
	}
	os.WriteFile(filepath.Join(dir, "chopin.toml"), []byte(file[:strings.Index(file, "\n\n")+1]), 0o600)
	cfg, err := config.Load(config.Flags{}, func(k string) string { return env[k] })
	if err != nil || len(cfg.Agents) != 1 || cfg.Agents[0].Name != "mine" || strings.Join(cfg.Agents[0].Command, " ") != "my-agent --acp" {
		t.Errorf("agents %+v, %v", cfg.Agents, err)
	}
}
