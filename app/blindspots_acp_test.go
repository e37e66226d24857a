package app

// The ACP bridge at its edges, end to end with the real app, the real CLI
// and a fake agent process: a permission answer that matches none of the
// agent's options is cancelled, never taken as one; an isolated session (a
// generated description's) reads no file of the checkout, though the
// document's session may; and the document's session reads a file of
// exactly 1 MiB but not one byte more, and nothing through a link to the
// checkout's parent.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// edgeACPAgentEnv makes this test binary the edge tests' fake agent: the
// fake agent of acp_test.go, which also reads the checkout in a
// description prompt and answers "size PATH" prompts.
const edgeACPAgentEnv = "CHOPIN_TEST_EDGE_ACP_AGENT"

// TestEdgeACPAgent is not a test: it is the edge tests' fake agent process.
func TestEdgeACPAgent(t *testing.T) {
	if os.Getenv(edgeACPAgentEnv) == "" {
		t.Skip("the fake ACP agent runs only as a child process")
	}
	a := &edgeAgent{fakeAgent: &fakeAgent{}, cwds: map[sdk.SessionId]string{}}
	a.mu.Lock() // the connection calls a before NewAgentSideConnection returns
	a.conn = sdk.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	done := a.conn.Done()
	a.mu.Unlock()
	<-done
	os.Exit(0)
}

// edgeACPSecretsEnv names a file the edge agent appends the MCP server
// entry of each session it opens to: "URL AUTHORIZATION".
const edgeACPSecretsEnv = "CHOPIN_TEST_EDGE_ACP_SECRETS"

// edgeAgent is the fake agent with more behaviours: a description prompt
// reads notes.md of its session's working directory first and says what
// came of it in the description; "size PATH" reads PATH (relative to the
// working directory) and answers with its length or the refusal; and
// "secrets" tries the first and the last MCP entry it was given (of this
// process or an earlier one) and answers with the HTTP statuses.
type edgeAgent struct {
	*fakeAgent

	cwdMu sync.Mutex
	cwds  map[sdk.SessionId]string // every session's working directory
}

func (a *edgeAgent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	r, err := a.fakeAgent.NewSession(ctx, p)
	if err == nil {
		a.cwdMu.Lock()
		a.cwds[r.SessionId] = p.Cwd
		a.cwdMu.Unlock()
	}
	if name := os.Getenv(edgeACPSecretsEnv); name != "" && len(p.McpServers) == 1 && p.McpServers[0].Http != nil {
		e := p.McpServers[0].Http
		if f, ferr := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); ferr == nil {
			fmt.Fprintf(f, "%s %s\n", e.Url, e.Headers[0].Value)
			f.Close()
		}
	}
	return r, err
}

// secrets answers "old STATUS, new STATUS": an MCP initialize sent with the
// first and with the last entry the agent was given.
func (a *edgeAgent) secrets() string {
	b, err := os.ReadFile(os.Getenv(edgeACPSecretsEnv))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err != nil || len(lines) == 0 {
		return fmt.Sprintf("no entries: %v", err)
	}
	status := func(line string) string {
		url, auth, _ := strings.Cut(line, " ")
		req, _ := http.NewRequest("POST", url, strings.NewReader(initializeBody))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		return fmt.Sprint(resp.StatusCode)
	}
	return fmt.Sprintf("old %s, new %s", status(lines[0]), status(lines[len(lines)-1]))
}

// read reads path, relative to the session's working directory, as the
// agent would, and says what came of it in one line.
func (a *edgeAgent) read(ctx context.Context, sid sdk.SessionId, path string) string {
	a.cwdMu.Lock()
	cwd := a.cwds[sid]
	a.cwdMu.Unlock()
	r, err := a.client().ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sid, Path: filepath.Join(cwd, path)})
	if err != nil {
		return "refused: " + err.Error()
	}
	return fmt.Sprintf("size %d: %.40s", len(r.Content), strings.Join(strings.Fields(r.Content), " "))
}

func (a *edgeAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	end := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	for _, b := range p.Prompt {
		if b.Text == nil {
			continue
		}
		if m := descriptionMaterialRE.FindStringSubmatch(b.Text.Text); m != nil {
			first, _, _ := strings.Cut(m[1], "\n")
			notes := a.read(ctx, p.SessionId, "notes.md")
			if strings.HasPrefix(notes, "refused: ") {
				notes = "refused"
			}
			a.say(ctx, p.SessionId, sdk.UpdateAgentMessageText(descriptionJSON("Plan for "+strings.TrimPrefix(first, "# ")+"; notes "+notes)))
			return end, nil
		}
	}
	text := p.Prompt[len(p.Prompt)-1].Text.Text
	if strings.HasSuffix(text, "secrets") {
		a.say(ctx, p.SessionId, sdk.UpdateAgentMessageText(a.secrets()))
		return end, nil
	}
	if i := strings.LastIndex(text, "size "); i >= 0 {
		a.say(ctx, p.SessionId, sdk.UpdateAgentMessageText(a.read(ctx, p.SessionId, text[i+len("size "):])))
		return end, nil
	}
	return a.fakeAgent.Prompt(ctx, p)
}

// runEdgeACPPlanner starts chopin planner --acp exec with the edge agent.
func (ta *testApp) runEdgeACPPlanner(t *testing.T, docURL string) *plannerCLI {
	t.Helper()
	t.Setenv(edgeACPAgentEnv, "1")
	cli := runPlanner(t, ta.plannerEnv(nil), "--acp", "exec", docURL, "--", os.Args[0], "-test.run=^TestEdgeACPAgent$")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chopin planner --acp stdout:\n%s\nstderr:\n%s", cli.stdout, cli.stderr)
		}
	})
	return cli
}

// edgeCheckout is a checkout with notes.md, files of exactly 1 MiB and one
// byte more, and a link "up" to the folder it is in, which holds a file.
func edgeCheckout(t *testing.T) string {
	t.Helper()
	dir := gitCheckout(t, "")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "notes.md"), "private notes of the checkout\n")
	line := "a line of the large file\n"
	mib := strings.Repeat(line, (1<<20)/len(line))
	mib += strings.Repeat("x", 1<<20-len(mib)-1) + "\n"
	write(filepath.Join(dir, "exact.txt"), mib)
	write(filepath.Join(dir, "over.txt"), mib+"y")
	write(filepath.Join(filepath.Dir(dir), "sibling.txt"), "beside the checkout\n")
	if err := os.Symlink("..", filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestACPPermissionAnswerThatMatchesNoOption: a person who writes an answer
// to the agent's permission question, even one that reads like an option's
// label, cancels the request: only a chosen option is an outcome.
func TestACPPermissionAnswerThatMatchesNoOption(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	cli := ta.runACPPlanner(t, "script", ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)
	for i, answer := range []map[string]any{
		{"text": "Allow"},
		{"text": "yes, go ahead"},
		{"labels": []string{"Allow always"}},
	} {
		browser.Send(map[string]any{"type": "chat:send", "id": fmt.Sprint("m", i), "text": "@chopin may I"})
		var card map[string]any
		for card == nil || card["status"] != "open" {
			card = browser.Until("decision:update")["decision"].(map[string]any)
		}
		r := ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+card["id"].(string)+"/answer", answer)
		if r.Status != http.StatusOK {
			t.Fatalf("answer %v: %d %s", answer, r.Status, r.Body)
		}
		var m map[string]any
		for m == nil || m["role"] != "planner" || m["status"] == "streaming" {
			m = browser.Until("chat:message")["message"].(map[string]any)
		}
		if m["text"] != "Permission: cancelled" {
			raw, _ := json.Marshal(answer)
			t.Errorf("the answer %s: the agent got %v", raw, m["text"])
		}
	}
	cli.stop(t)
}

// TestACPReadEdges: reads through the bridge at their edges. The document's
// session reads notes.md; a description's isolated session, prompted with
// the document's text, may not (its description says the read was
// refused). A file of exactly 1 MiB is read, one byte more is refused, and
// a link to the checkout's parent leads nowhere.
func TestACPReadEdges(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 50*time.Millisecond))
	dir := edgeCheckout(t)
	if r := ta.Do("POST", "/api/repositories", map[string]any{"name": "octo/plans", "path": dir}); r.Status != http.StatusCreated {
		t.Fatalf("add repository: %d %s", r.Status, r.Body)
	}
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	cli := ta.runEdgeACPPlanner(t, ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)

	// The document's session is open (its working directory known) before
	// the description's session asks.
	if r := reply(browser, "m1", "@chopin size notes.md"); r["text"] != "size 30: private notes of the checkout" {
		t.Fatalf("notes.md in the document's session: %v", r)
	}
	ta.putPlan(t, ch.ID, 0, "# Storage\n\nOne file.\n")
	eventually(t, "the description of the plan put", func() bool {
		return strings.HasPrefix(descriptionOf(ta.channelNow(t, ch.ID)), "Plan for Storage")
	})
	if d := descriptionOf(ta.channelNow(t, ch.ID)); d != "Plan for Storage; notes refused" {
		t.Errorf("the description's session read the checkout: %q", d)
	}

	for i, tc := range []struct{ path, want string }{
		{"exact.txt", "size 1048576: a line of the large file a line"},
		{"over.txt", "refused: "},
		{"up", "refused: "},
		{"up/sibling.txt", "refused: "},
	} {
		r := reply(browser, fmt.Sprint("s", i), "@chopin size "+tc.path)
		got := fmt.Sprint(r["text"])
		if !strings.HasPrefix(got, tc.want) || strings.Contains(got, "beside the checkout") {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
		if strings.HasPrefix(tc.path, "up") && !strings.Contains(got, "outside") {
			t.Errorf("%s: %q does not say the path leads outside", tc.path, got)
		}
	}
	cli.stop(t)
}

// TestACPMCPSecretOfAnEndedSession: each ACP session gets a new secret for
// the bridge's MCP server, so an agent process that ended (here, crashed)
// can no longer call Chopin's tools, while the one that replaced it can.
func TestACPMCPSecretOfAnEndedSession(t *testing.T) {
	t.Setenv(edgeACPSecretsEnv, filepath.Join(t.TempDir(), "secrets"))
	ta, ch, browser := startWithLaunch(t)
	cli := ta.runEdgeACPPlanner(t, ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)
	if r := reply(browser, "m1", "@chopin secrets"); r["text"] != "old 200, new 200" {
		t.Fatalf("the first session's secret: %v", r)
	}
	if r := reply(browser, "m2", "@chopin crash"); r["status"] != "failed" {
		t.Fatalf("crash: %v", r)
	}
	if r := reply(browser, "m3", "@chopin secrets"); r["text"] != "old 401, new 200" {
		t.Errorf("after the agent was started again: %v", r)
	}
	cli.stop(t)
}
