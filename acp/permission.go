package acp

// The agent's permission requests (session/request_permission). A request
// for one of Chopin's own host tools, which the bridge's MCP server
// offers, is allowed by the bridge: the person asked the Planner to work on
// the document, and those tools are Chopin's, bounded and confined. A
// request for one of the agent's own tools (a command, a file write, a
// fetch) is a Decision that names the tool and what it will do; its card
// is about no passage of the plan, so Chopin keeps it in Decisions and
// Chat, out of the plan (the header permissionHeader says so), and the
// plan's revision does not move. An "allow always" or "reject always"
// answer holds for the rest of the ACP session: the same tool call asked
// again is answered with the same option. An answer that is none of the
// agent's options is cancelled, never allowed.

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// permissionHeader is the header of a permission request's question.
// Chopin keeps a questionnaire of one question with this header out of the
// plan (plannerhost's isPermission): it shows in Decisions and Chat only.
const permissionHeader = "Permission"

// permissionKinds say each kind of permission option in words.
var permissionKinds = map[sdk.PermissionOptionKind]string{
	sdk.PermissionOptionKindAllowOnce:    "allow once",
	sdk.PermissionOptionKindAllowAlways:  "allow always, for the rest of this agent session",
	sdk.PermissionOptionKindRejectOnce:   "reject once",
	sdk.PermissionOptionKindRejectAlways: "reject always, for the rest of this agent session",
}

// toolActions say what a tool call of each kind will do.
var toolActions = map[sdk.ToolKind]string{
	sdk.ToolKindExecute:    "run a command",
	sdk.ToolKindEdit:       "change a file",
	sdk.ToolKindDelete:     "delete a file",
	sdk.ToolKindMove:       "move a file",
	sdk.ToolKindRead:       "read a file",
	sdk.ToolKindSearch:     "search files",
	sdk.ToolKindFetch:      "fetch from the web",
	sdk.ToolKindThink:      "start a sub-task",
	sdk.ToolKindSwitchMode: "change its mode",
}

// agentTitles are how questions name the presets' agents.
var agentTitles = map[string]string{"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}

var cancelledOutcome = sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}

func selectedOutcome(id sdk.PermissionOptionId) sdk.RequestPermissionResponse {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: id}}}
}

// RequestPermission answers for Chopin's host tools, answers again what a
// person allowed or rejected always in this session, and asks the
// document's people the rest: a questionnaire of one single-choice
// question whose options are the agent's.
func (c *agentClient) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	d := c.d
	d.mu.Lock()
	st := d.turn
	ours := p.SessionId == d.session
	isolated := d.isolatedByACP(p.SessionId) != nil
	d.mu.Unlock()
	if isolated {
		// An isolated session gets no Decisions (spec/agent-connection.md).
		d.logger().Info("permission request in an isolated session is cancelled")
		return cancelledOutcome, nil
	}
	if st == nil || !ours || len(p.Options) == 0 {
		d.logger().Warn("permission request outside a turn is cancelled")
		return cancelledOutcome, nil
	}
	if tool, ok := d.hostToolOf(p.ToolCall); ok {
		if id, ok := optionOfKind(p.Options, sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways); ok {
			d.logger().Info("permission for a host tool allowed by the bridge", "tool", tool)
			return selectedOutcome(id), nil
		}
	}
	key := permissionKey(p)
	d.mu.Lock()
	kept, ok := d.always[key]
	d.mu.Unlock()
	if ok && hasOption(p.Options, kept) {
		d.logger().Info("permission answered as the person chose always", "option", kept)
		return selectedOutcome(kept), nil
	}
	in, ids := permissionQuestion(d.agentTitle(), d.cwdNow(), p)
	if len(in.Params.Questions[0].Options) < 1 {
		return cancelledOutcome, nil
	}
	// The question is withdrawn when the turn ends or the agent gives up.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(st.ctx, cancel)
	defer stop()
	r, err := st.t.Session.Ask(actx, in, client.AskOptions{})
	if err != nil {
		d.logger().Warn("permission request", "err", err)
	}
	if err != nil || r.Status != "answered" || len(r.Answers) != 1 {
		return cancelledOutcome, nil
	}
	a := r.Answers[0]
	if a.Kind != wire.KindOption || a.Answer == nil {
		return cancelledOutcome, nil
	}
	id, ok := ids[*a.Answer]
	if !ok {
		return cancelledOutcome, nil
	}
	if kind := optionKind(p.Options, id); kind == sdk.PermissionOptionKindAllowAlways || kind == sdk.PermissionOptionKindRejectAlways {
		d.mu.Lock()
		if d.always == nil {
			d.always = map[string]sdk.PermissionOptionId{}
		}
		d.always[key] = id
		d.mu.Unlock()
	}
	return selectedOutcome(id), nil
}

// permissionKey names a tool call for "always": its session, kind and
// title (the command, the file), which is what the person saw.
func permissionKey(p sdk.RequestPermissionRequest) string {
	kind, title := "", ""
	if p.ToolCall.Kind != nil {
		kind = string(*p.ToolCall.Kind)
	}
	if p.ToolCall.Title != nil {
		title = strings.TrimSpace(*p.ToolCall.Title)
	}
	return string(p.SessionId) + "\x00" + kind + "\x00" + title
}

// optionOfKind is the first option of the first kind the agent offers.
func optionOfKind(options []sdk.PermissionOption, kinds ...sdk.PermissionOptionKind) (sdk.PermissionOptionId, bool) {
	for _, k := range kinds {
		for _, o := range options {
			if o.Kind == k {
				return o.OptionId, true
			}
		}
	}
	return "", false
}

func optionKind(options []sdk.PermissionOption, id sdk.PermissionOptionId) sdk.PermissionOptionKind {
	for _, o := range options {
		if o.OptionId == id {
			return o.Kind
		}
	}
	return ""
}

func hasOption(options []sdk.PermissionOption, id sdk.PermissionOptionId) bool {
	return optionKind(options, id) != ""
}

// hostToolOf says whether a permission request is for one of the host
// tools the bridge's MCP server offers, and which. Each agent names such a
// call its own way, and only those exact forms count, never a title that
// merely mentions the server (a command line may say anything):
//
//	Claude Code  title "mcp__chopin__edit_plan"
//	Gemini CLI   title "edit_plan (chopin MCP Server)"
//	Codex        rawInput {"server_name": "chopin", "request": {"_meta": {"codex_approval_kind": "mcp_tool_call"}, ...}}
//
// A call of a kind that changes files, runs commands or fetches is never a
// host tool's.
func (d *document) hostToolOf(tc sdk.ToolCallUpdate) (string, bool) {
	if tc.Kind != nil {
		switch *tc.Kind {
		case sdk.ToolKindOther, sdk.ToolKindRead, sdk.ToolKindSearch, sdk.ToolKindThink:
		default:
			return "", false
		}
	}
	title := ""
	if tc.Title != nil {
		title = strings.TrimSpace(*tc.Title)
	}
	if name, ok := strings.CutPrefix(title, "mcp__"+mcpServerName+"__"); ok {
		return name, d.offersHostTool(name)
	}
	if name, ok := strings.CutSuffix(title, " ("+mcpServerName+" MCP Server)"); ok {
		return name, d.offersHostTool(name)
	}
	if server, name, ok := codexMCPCall(tc.RawInput); ok && server == mcpServerName {
		// Every tool of the bridge's server is a host tool; a name Codex
		// gives must be one of them.
		return name, name == "" || d.offersHostTool(name)
	}
	return "", false
}

// codexToolRE finds the tool in Codex's question for an MCP tool call.
var codexToolRE = regexp.MustCompile(`run tool "([^"]+)"`)

// codexMCPCall reads Codex's permission request for an MCP tool call: its
// raw input is the MCP elicitation Codex makes, {"server_name", "request":
// {"_meta": {"codex_approval_kind": "mcp_tool_call", ...}, "message":
// "Allow the S MCP server to run tool \"T\"?"}}. name is "" when Codex
// does not say it.
func codexMCPCall(raw any) (server, name string, ok bool) {
	in, _ := raw.(map[string]any)
	server, _ = in["server_name"].(string)
	req, _ := in["request"].(map[string]any)
	meta, _ := req["_meta"].(map[string]any)
	if server == "" || meta["codex_approval_kind"] != "mcp_tool_call" {
		return "", "", false
	}
	name, _ = meta["tool_name"].(string)
	if message, _ := req["message"].(string); name == "" {
		if m := codexToolRE.FindStringSubmatch(message); m != nil {
			name = m[1]
		}
	}
	return server, name, true
}

// offersHostTool says whether the MCP server lists the tool now.
func (d *document) offersHostTool(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// agentTitle is how a question names the agent.
func (d *document) agentTitle() string {
	if t, ok := agentTitles[d.b.cfg.Name]; ok {
		return t
	}
	return "The agent"
}

func (d *document) cwdNow() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cwd
}

// permissionQuestion is the Decision for a permission request: what the
// agent will do, in words, with the command, files and explanation it gave;
// and the option id of each label.
func permissionQuestion(agent, cwd string, p sdk.RequestPermissionRequest) (wire.Input, map[string]sdk.PermissionOptionId) {
	tc := p.ToolCall
	title := ""
	if tc.Title != nil {
		title = strings.TrimSpace(*tc.Title)
	}
	action := "use a tool"
	if tc.Kind != nil && toolActions[*tc.Kind] != "" {
		action = toolActions[*tc.Kind]
	}
	firstLine, _, _ := strings.Cut(title, "\n")
	var b strings.Builder
	if server, name, ok := codexMCPCall(tc.RawInput); ok && name != "" {
		// Codex titles every MCP tool call "Approve MCP tool call".
		fmt.Fprintf(&b, "%s asks to use the tool %s of the MCP server %s.", agent, codeSpan(cutText(name, 200)), codeSpan(cutText(server, 200)))
	} else if firstLine != "" {
		fmt.Fprintf(&b, "%s asks to %s: %s", agent, action, codeSpan(cutText(firstLine, 300)))
	} else {
		fmt.Fprintf(&b, "%s asks to %s.", agent, action)
	}
	for _, detail := range permissionDetails(title, cwd, tc) {
		b.WriteString("\n\n" + detail)
	}

	ids := map[string]sdk.PermissionOptionId{}
	var options []wire.Option
	for _, o := range p.Options {
		if len(options) == wire.MaxOptions {
			break
		}
		label := cutText(strings.TrimSpace(o.Name), 200)
		if label == "" {
			label = string(o.OptionId)
		}
		words := permissionKinds[o.Kind]
		if words == "" {
			words = string(o.Kind)
		}
		if _, twice := ids[label]; twice {
			label = cutText(label+" ("+words+")", 240)
		}
		if _, twice := ids[label]; twice {
			continue
		}
		ids[label] = o.OptionId
		options = append(options, wire.Option{Label: label, Description: cutText(words, wire.MaxNoteChars)})
	}
	return wire.Input{Method: wire.MethodQuestionnaire, Params: &wire.QuestionnaireParams{Questions: []wire.QuestionItem{{
		Question: cutText(b.String(), wire.MaxNoteChars), Header: permissionHeader, Options: options,
	}}}}, ids
}

// permissionDetails are the paragraphs under a permission question: the
// whole command when the title does not show it, the files, and the
// agent's own words (Claude Code's description of a command, Codex's
// explanation, Gemini CLI's arguments).
func permissionDetails(title, cwd string, tc sdk.ToolCallUpdate) []string {
	var out []string
	if command := commandOf(tc.RawInput); command != "" && command != title {
		out = append(out, fence(cutText(command, 2000)))
	} else if strings.Contains(title, "\n") {
		out = append(out, fence(cutText(title, 2000)))
	}
	var files []string
	for _, l := range tc.Locations {
		files = append(files, codeSpan(relativeTo(cwd, l.Path)))
	}
	for _, c := range tc.Content {
		if c.Diff != nil {
			files = append(files, codeSpan(relativeTo(cwd, c.Diff.Path)))
		}
	}
	if len(files) > 0 {
		out = append(out, "Files: "+strings.Join(dedupe(files), ", "))
	}
	for _, c := range tc.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			if text := strings.TrimSpace(c.Content.Content.Text.Text); text != "" && text != title {
				out = append(out, fence(cutText(text, 1000)))
			}
		}
	}
	return out
}

// commandOf is a command line in a tool call's raw input ("command", as a
// string or a list of words), or "".
func commandOf(raw any) string {
	in, ok := raw.(map[string]any)
	if !ok {
		return ""
	}
	switch c := in["command"].(type) {
	case string:
		return c
	case []any:
		words := make([]string, 0, len(c))
		for _, w := range c {
			if s, ok := w.(string); ok {
				words = append(words, s)
			}
		}
		return strings.Join(words, " ")
	}
	return ""
}

func relativeTo(cwd, path string) string {
	if cwd != "" && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// codeSpan is s as Markdown inline code: fenced by a run of backticks
// longer than any in s, so the text shows exactly.
func codeSpan(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	fenceLen := longestRun(s, '`') + 1
	ticks := strings.Repeat("`", fenceLen)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// fence is s as a Markdown code block, fenced by a run of backticks longer
// than any in s.
func fence(s string) string {
	ticks := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return ticks + "\n" + s + "\n" + ticks
}

func longestRun(s string, c byte) int {
	most, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			most = max(most, run)
		} else {
			run = 0
		}
	}
	return most
}
