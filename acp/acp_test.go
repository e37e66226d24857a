package acp

// Unit tests of the bridge's pieces that need no Chopin: confined reads,
// permission questions, merged chunks, the JSON line of a JSON turn, and
// the pacing of a burst through acp-go-sdk's real connection (its agent
// side writing, its client side reading through pacedReader).

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

func TestReadConfined(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.md"), []byte("one\ntwo\nthree\n"), 0o600)
	os.MkdirAll(filepath.Join(root, ".git"), 0o700)
	os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref"), 0o600)
	os.MkdirAll(filepath.Join(root, "sub", ".git"), 0o700)
	os.WriteFile(filepath.Join(root, "sub", ".git", "config"), []byte("x"), 0o600)
	out := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(out, []byte("s"), 0o600)
	os.Symlink(out, filepath.Join(root, "link"))
	os.Symlink(filepath.Join(root, "a.md"), filepath.Join(root, "inner-link"))
	big := filepath.Join(root, "big")
	os.WriteFile(big, make([]byte, maxReadBytes+1), 0o600)
	// A link to a nested repository's .git, a .git in other letters, and a
	// link to the folder the working directory is in.
	os.Symlink(filepath.Join(root, "sub", ".git"), filepath.Join(root, "sub-git"))
	os.MkdirAll(filepath.Join(root, ".GIT"), 0o700)
	os.WriteFile(filepath.Join(root, ".GIT", "config"), []byte("x"), 0o600)
	os.Symlink(filepath.Dir(root), filepath.Join(root, "parent"))

	for _, tc := range []struct {
		path, want, err string
	}{
		{filepath.Join(root, "a.md"), "one\ntwo\nthree\n", ""},
		{filepath.Join(root, "inner-link"), "one\ntwo\nthree\n", ""},
		{filepath.Join(root, "sub", "..", "a.md"), "one\ntwo\nthree\n", ""},
		{"a.md", "", "absolute"},
		{filepath.Join(root, ".git", "HEAD"), "", ".git"},
		{filepath.Join(root, "sub", ".git", "config"), "", ".git"},
		{filepath.Join(root, "link"), "", "outside"},
		{filepath.Join(root, "..", filepath.Base(filepath.Dir(out)), "secret"), "", "outside"},
		{filepath.Join(root, "missing"), "", "no such file"},
		{root, "", "not a file"},
		{big, "", "larger"},
		{filepath.Join(root, "sub-git", "config"), "", ".git"},
		{filepath.Join(root, ".GIT", "config"), "", ".git"},
		{filepath.Join(root, "parent"), "", "outside"},
		{filepath.Join(root, "parent", filepath.Base(filepath.Dir(out)), "secret"), "", "outside"},
	} {
		got, err := readConfined(root, tc.path)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("%s: %q, %v", tc.path, got, err)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: want an error with %q, got %q, %v", tc.path, tc.err, got, err)
		}
	}
	// A named pipe is refused at once, not opened (which would wait for a
	// writer).
	if err := exec.Command("mkfifo", filepath.Join(root, "pipe")).Run(); err == nil {
		done := make(chan error, 1)
		go func() {
			_, err := readConfined(root, filepath.Join(root, "pipe"))
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a file") {
				t.Errorf("a named pipe: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("reading a named pipe waited for a writer")
		}
	}
	two, one := 2, 1
	if got := lines("one\ntwo\nthree\n", &two, &one); got != "two\n" {
		t.Errorf("line 2, limit 1: %q", got)
	}
}

func TestPermissionQuestion(t *testing.T) {
	in, ids := permissionQuestion("The agent", "", sdk.RequestPermissionRequest{
		ToolCall: sdk.ToolCallUpdate{Title: sdk.Ptr("Run make test")},
		Options: []sdk.PermissionOption{
			{OptionId: "a", Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: "b", Name: "Allow", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: "c", Name: "", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	q := in.Params.Questions[0]
	if in.Method != wire.MethodQuestionnaire || q.Header != permissionHeader || q.MultiSelect ||
		q.Question != "The agent asks to use a tool: `Run make test`" {
		t.Errorf("question %+v", q)
	}
	var got []string
	for _, o := range q.Options {
		got = append(got, o.Label+"="+string(ids[o.Label])+" ("+o.Description+")")
	}
	if want := "Allow=a (allow once)|Allow (allow always, for the rest of this agent session)=b (allow always, for the rest of this agent session)|c=c (reject once)"; strings.Join(got, "|") != want {
		t.Errorf("options %q, want %q", strings.Join(got, "|"), want)
	}
	if errs := in.BrokenLimits(false); len(errs) != 0 {
		t.Errorf("limits %v", errs)
	}

	// What each agent sends, in words.
	for _, tc := range []struct {
		name string
		call sdk.ToolCallUpdate
		want string
	}{
		{"Claude Code's Bash", sdk.ToolCallUpdate{Title: sdk.Ptr("npm test"), Kind: sdk.Ptr(sdk.ToolKindExecute),
			RawInput: map[string]any{"command": "npm test", "description": "Run the tests"},
			Content:  []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("Run the tests"))}},
			"Claude Code asks to run a command: `npm test`\n\n```\nRun the tests\n```"},
		{"a title with backticks", sdk.ToolCallUpdate{Title: sdk.Ptr("echo `date`"), Kind: sdk.Ptr(sdk.ToolKindExecute)},
			"Claude Code asks to run a command: `` echo `date` ``"},
		{"a command as words", sdk.ToolCallUpdate{Title: sdk.Ptr("Run tests"), Kind: sdk.Ptr(sdk.ToolKindExecute),
			RawInput: map[string]any{"command": []any{"go", "test", "./..."}}},
			"Claude Code asks to run a command: `Run tests`\n\n```\ngo test ./...\n```"},
		{"a file write", sdk.ToolCallUpdate{Title: sdk.Ptr("Write main.go"), Kind: sdk.Ptr(sdk.ToolKindEdit),
			Locations: []sdk.ToolCallLocation{{Path: "/work/repo/main.go"}},
			Content:   []sdk.ToolCallContent{sdk.ToolDiffContent("/work/repo/main.go", "package main\n")}},
			"Claude Code asks to change a file: `Write main.go`\n\nFiles: `main.go`"},
		{"no title", sdk.ToolCallUpdate{Kind: sdk.Ptr(sdk.ToolKindFetch)}, "Claude Code asks to fetch from the web."},
		{"Codex's MCP tool call", sdk.ToolCallUpdate{Title: sdk.Ptr("Approve MCP tool call"), RawInput: codexMCPInput("github", "create_issue")},
			"Claude Code asks to use the tool `create_issue` of the MCP server `github`."},
	} {
		in, _ := permissionQuestion("Claude Code", "/work/repo", sdk.RequestPermissionRequest{ToolCall: tc.call,
			Options: []sdk.PermissionOption{{OptionId: "a", Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce}}})
		if q := in.Params.Questions[0].Question; q != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, q, tc.want)
		}
	}
}

// codexMCPInput is the raw input of Codex's permission request for an MCP
// tool call, as codex-acp 0.16.0 sends it.
func codexMCPInput(server, tool string) map[string]any {
	return map[string]any{"id": "mcp_tool_call_approval_call_1", "server_name": server, "turn_id": "01a2",
		"request": map[string]any{"mode": "form", "message": "Allow the " + server + " MCP server to run tool \"" + tool + "\"?",
			"_meta":            map[string]any{"codex_approval_kind": "mcp_tool_call", "persist": []any{"session", "always"}, "tool_params": map[string]any{}},
			"requested_schema": map[string]any{"type": "object", "properties": map[string]any{}}}}
}

// TestHostToolOf: only the exact forms each agent gives a call of the
// bridge's MCP server count as a host tool's, never a command that names
// one, nor a tool the server does not offer.
func TestHostToolOf(t *testing.T) {
	d := &document{b: &Bridge{}, tools: []wire.Tool{{Name: "read_plan"}, {Name: "edit_plan"}}}
	codex := func(server, tool string) map[string]any { return codexMCPInput(server, tool) }
	for _, tc := range []struct {
		name  string
		title string
		kind  sdk.ToolKind
		raw   any
		want  string
	}{
		{"Claude Code", "mcp__chopin__edit_plan", sdk.ToolKindOther, nil, "edit_plan"},
		{"Gemini CLI", "read_plan (chopin MCP Server)", sdk.ToolKindOther, nil, "read_plan"},
		{"Codex", "Approve MCP tool call", "", codex("chopin", "edit_plan"), "edit_plan"},
		{"Codex, a tool the server does not offer", "Approve MCP tool call", "", codex("chopin", "delete_everything"), ""},
		{"Codex, another server", "Approve MCP tool call", "", codex("github", "edit_plan"), ""},
		{"a command naming the tool", "mcp__chopin__edit_plan", sdk.ToolKindExecute, nil, ""},
		{"a command mentioning it", "echo mcp__chopin__edit_plan && rm -rf ~", sdk.ToolKindOther, nil, ""},
		{"another server's tool", "mcp__github__edit_plan", sdk.ToolKindOther, nil, ""},
		{"a tool the server does not offer", "mcp__chopin__delete_everything", sdk.ToolKindOther, nil, ""},
		{"a file write", "edit_plan (chopin MCP Server)", sdk.ToolKindEdit, nil, ""},
	} {
		call := sdk.ToolCallUpdate{Title: sdk.Ptr(tc.title), RawInput: tc.raw}
		if tc.kind != "" {
			call.Kind = sdk.Ptr(tc.kind)
		}
		name, ok := d.hostToolOf(call)
		if got := map[bool]string{true: name}[ok]; got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, name, ok, tc.want)
		}
	}
}

func TestMergeChunk(t *testing.T) {
	last := sdk.UpdateAgentMessageText("a")
	if !mergeChunk(&last, sdk.UpdateAgentMessageText("b")) || last.AgentMessageChunk.Content.Text.Text != "ab" {
		t.Errorf("text chunks merge: %+v", last)
	}
	if mergeChunk(&last, sdk.UpdateAgentThoughtText("c")) {
		t.Error("a thought merged into a message")
	}
	long := sdk.UpdateAgentMessageText(strings.Repeat("x", maxMergedChunk))
	if mergeChunk(&long, sdk.UpdateAgentMessageText("y")) {
		t.Error("a chunk merged past the bound")
	}
}

// countingClient counts session updates, slowly, as a busy bridge would.
type countingClient struct {
	agentClient
	n atomic.Int64
}

func (c *countingClient) SessionUpdate(context.Context, sdk.SessionNotification) error {
	defer c.pace.done()
	time.Sleep(20 * time.Microsecond)
	c.n.Add(1)
	return nil
}

type burstAgent struct {
	sdk.Agent
	conn *sdk.AgentSideConnection
	n    int
}

func (a *burstAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	for range a.n {
		if err := a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: sdk.UpdateAgentMessageText("x")}); err != nil {
			return sdk.PromptResponse{}, err
		}
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// TestPacedBurst: 5,000 chunks in a burst reach a slow client through the
// SDK's connection, every one, and the prompt's answer comes after them.
// Without pacing the SDK closes the connection after 1,024.
func TestPacedBurst(t *testing.T) {
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	a := &burstAgent{n: 5000}
	a.conn = sdk.NewAgentSideConnection(a, agentOut, agentIn)
	c := &countingClient{}
	c.pace = newPacedReader(clientIn)
	conn := sdk.NewClientSideConnection(c, clientOut, c.pace)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: "s", Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if r.StopReason != sdk.StopReasonEndTurn || c.n.Load() != 5000 {
		t.Errorf("stop %s after %d of 5000 updates", r.StopReason, c.n.Load())
	}
}

// TestPromptBlocksAskForJSON: a turn whose responseFormat is JSON ends its
// prompt with a line asking for only JSON of the schema; a text turn has no
// such line.
func TestPromptBlocksAskForJSON(t *testing.T) {
	turn := &client.Turn{Message: wire.Turn{Instructions: "Describe.", Prompt: "<material>\nx\n</material>",
		ResponseFormat: &wire.ResponseFormat{Type: "json", Schema: json.RawMessage("{\n \"type\": \"object\",\n \"required\": [\"description\"]\n}")}}}
	blocks := promptBlocks(turn, false)
	if len(blocks) != 3 || blocks[0].Text.Text != "Describe." || blocks[1].Text.Text != turn.Message.Prompt {
		t.Fatalf("blocks %+v", blocks)
	}
	want := "Your answer must be only JSON: no other text before or after it, no Markdown, no code fence. It must match this JSON Schema:\n" +
		`{"type":"object","required":["description"]}`
	if got := blocks[2].Text.Text; got != want {
		t.Errorf("JSON line %q", got)
	}
	turn.Message.ResponseFormat = &wire.ResponseFormat{Type: "text"}
	if blocks := promptBlocks(turn, false); len(blocks) != 2 {
		t.Errorf("a text turn has %d blocks", len(blocks))
	}
}
