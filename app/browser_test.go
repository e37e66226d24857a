package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/modelserver"
	"github.com/chopin-desktop/chopin/room"
)

// chromiumPath is Debian's Chromium, which CI installs with apt; the tests
// never download a browser of their own.
const chromiumPath = "/usr/bin/chromium"

// TestBrowser drives the embedded web UI in a real Chromium: ui/tests/browser.mjs
// (playwright-core) against the real app on port 0. The script reports each
// step, which becomes a subtest here, and asks this test for what only the
// server side can do or see (the plan as stored, a Decision the Planner asks).
func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		apptest.Missing(t, "no Chromium at %s (apt-get install chromium); .ci/run installs it", chromiumPath)
	}
	ui, node := apptest.NodeTool(t, "node", "playwright-core")
	chopinOnPath(t) // so the texts name "chopin", as for a person who installed it

	ta := startApp(t)
	// The model servers the Connect dialog looks for: one not running, one
	// on a free port with two models (never the real well-known ports).
	servers := []modelserver.Server{
		{ID: "ollama", Name: "Ollama", BaseURL: closedLoopbackURL(t), Start: "ollama serve", Pull: "ollama pull qwen2.5"},
		{ID: "llama.cpp", Name: "llama.cpp", BaseURL: fakeLocalModelServer(t, "qwen2.5", "llama3.2"), Start: "llama-server -m model.gguf --port 8080"},
	}
	ta.app.modelServers.Store(&servers)
	bp := &browserPlanner{ta: ta, modelServers: servers}
	// The walk takes under a minute alone and about twice that beside the
	// other packages' race-enabled tests; the limit only catches a hang.
	steps := nodeScript{args: []string{"tests/browser.mjs", ta.app.NewLaunchURL()}, timeout: 6 * time.Minute,
		step: subtestStep(t),
		answer: func(m scriptLine) (any, error) {
			var q struct{ Channel, Text string }
			if err := m.decode(&q); err != nil {
				return nil, err
			}
			return answerBrowser(ta, bp, m.Ask, q.Channel, q.Text)
		}}.run(t, ui, node)
	if steps < 25 {
		t.Errorf("browser.mjs ran %d steps, want at least 25", steps)
	}
}

// answerBrowser does for the script what only the server side can.
func answerBrowser(ta *testApp, bp *browserPlanner, ask, channelID, text string) (any, error) {
	switch ask {
	case "model-servers":
		return map[string]any{"servers": bp.modelServers}, nil
	case "attach":
		return map[string]bool{"ok": true}, bp.attach(channelID)
	case "attach-asking":
		// Another Planner, on its own document, without steer-turn: a
		// message while it works is refused as busy.
		other := &browserPlanner{ta: ta, noSteer: true}
		return map[string]bool{"ok": true}, other.attach(channelID)
	case "token":
		return map[string]string{"token": ta.Token()}, nil
	case "launch":
		return map[string]string{"url": ta.app.NewLaunchURL()}, nil
	case "planner":
		return bp.seen(), nil
	case "describe-hold":
		// Descriptions wait until describe-release, then read as
		// browserDescription.
		bp.mu.Lock()
		bp.describeGate = make(chan struct{})
		bp.mu.Unlock()
		return map[string]bool{"ok": true}, nil
	case "describe-release":
		bp.mu.Lock()
		bp.description = browserDescription
		if bp.describeGate != nil {
			close(bp.describeGate)
			bp.describeGate = nil
		}
		bp.mu.Unlock()
		return map[string]bool{"ok": true}, nil
	case "commands":
		// The client reports its catalog again, without the commands the
		// script names in text.
		return map[string]bool{"ok": true}, bp.reportCatalog(strings.Fields(text)...)
	case "checkout":
		// A Git checkout whose origin names another repository, and a plain
		// folder; the Planner reports reading the checkout once attached.
		dir := gitCheckout(ta.T, "git@github.com:someone/else.git")
		bp.mu.Lock()
		bp.checkout = dir
		bp.mu.Unlock()
		return map[string]string{"path": dir, "plain": ta.T.TempDir()}, nil
	case "nogit":
		// The Planner reports its checkout again, with Git found or not.
		bp.mu.Lock()
		bp.noGit = text == "true"
		bp.mu.Unlock()
		return map[string]bool{"ok": true}, bp.reportCatalog()
	case "plan":
		var plan room.Plan
		r := ta.Do("GET", "/api/channels/"+channelID+"/plan", nil)
		if r.Status != 200 {
			return nil, fmt.Errorf("GET plan: %d %s", r.Status, r.Body)
		}
		r.JSON(ta.T, &plan)
		return plan, nil
	case "append":
		// As a script that edits a live document does: read, write, and
		// read again when a tab's edit came in between.
		for try := 0; ; try++ {
			var plan room.Plan
			ta.Do("GET", "/api/channels/"+channelID+"/plan", nil).JSON(ta.T, &plan)
			r := ta.Do("PUT", "/api/channels/"+channelID+"/plan", map[string]any{"revision": plan.Revision, "source": plan.Source + text})
			if r.Status == 200 {
				return map[string]bool{"ok": true}, nil
			}
			if r.Status != 409 || !strings.Contains(string(r.Body), "stale-revision") || try == 4 {
				return nil, fmt.Errorf("PUT plan: %d %s", r.Status, r.Body)
			}
		}
	case "comments":
		var cs room.CommentSync
		ta.Do("GET", "/api/channels/"+channelID+"/comments", nil).JSON(ta.T, &cs)
		return cs, nil
	case "decisions":
		var list struct {
			Decisions []room.Decision `json:"decisions"`
		}
		ta.Do("GET", "/api/channels/"+channelID+"/decisions", nil).JSON(ta.T, &list)
		return list, nil
	case "decision":
		// As the Planner's ask would: a questionnaire whose card lands in the plan.
		raw := `{"method": "questionnaire", "params": {"questions": [
			{"question": "Which store?\nWe need **durability**.", "header": "Store", "options": [
				{"label": "SQLite", "description": "one file"}, {"label": "Postgres", "description": "a server"}]}]}}`
		if text != "" {
			raw = text // the script's own call
		}
		call, err := room.ParseQuestionCall([]byte(raw))
		if err != nil {
			return nil, err
		}
		ch, err := ta.app.store.Channel(context.Background(), channelID)
		if err != nil {
			return nil, err
		}
		err = ta.app.hub.Do(context.Background(), ta.app.roomChannel(ch), func(r *room.Room) error {
			_, err := r.Ask(context.Background(), call, nil, nil)
			return err
		})
		return map[string]bool{"ok": true}, err
	case "decision-after", "decision-apart":
		// A confirm card after the first block whose text holds text, as
		// the Planner's ask names a block; or asked apart from the plan, as
		// a permission is (block -2), text the call if any: a card that
		// adds no line to the plan.
		ch, err := ta.app.store.Channel(context.Background(), channelID)
		if err != nil {
			return nil, err
		}
		call := room.QuestionCall{Method: room.MethodConfirm, Title: "About this passage?", Message: "Shown in the plan."}
		err = ta.app.hub.Do(context.Background(), ta.app.roomChannel(ch), func(r *room.Room) error {
			if ask == "decision-apart" {
				call.Title = "Run the build?"
				if text != "" { // the script's own call
					var err error
					if call, err = room.ParseQuestionCall([]byte(text)); err != nil {
						return err
					}
				}
				_, err := r.AskApart(context.Background(), call, nil)
				return err
			}
			_, source := r.Source()
			lines := strings.Split(source, "\n")
			for _, b := range room.Blocks(source) {
				if strings.Contains(strings.Join(lines[b.StartLine-1:b.EndLine], "\n"), text) {
					_, err := r.Ask(context.Background(), call, &room.BlockRef{Index: b.Index, Digest: b.Digest}, nil)
					return err
				}
			}
			return fmt.Errorf("no block holds %q", text)
		})
		return map[string]bool{"ok": true}, err
	case "repository-checkout":
		// A repository with a local Git checkout, text its owner/name.
		dir := gitCheckout(ta.T, "")
		r := ta.Do("POST", "/api/repositories", map[string]string{"name": text, "path": dir})
		if r.Status != 201 {
			return nil, fmt.Errorf("POST repository: %d %s", r.Status, r.Body)
		}
		return map[string]string{"dir": dir}, nil
	case "messages":
		// text more Chat messages, one after another.
		n, err := strconv.Atoi(text)
		if err != nil {
			return nil, err
		}
		for i := 1; i <= n; i++ {
			if r := ta.Do("POST", "/api/channels/"+channelID+"/messages", map[string]string{"text": fmt.Sprintf("Older message %d", i)}); r.Status != 201 {
				return nil, fmt.Errorf("POST message: %d %s", r.Status, r.Body)
			}
		}
		return map[string]bool{"ok": true}, nil
	case "long-message":
		// A message over a page: its frame carries only its first page.
		long := "Long message start\n\n" + strings.Repeat("All the words of a long message. ", 1800) + "\n\nLong message end"
		if r := ta.Do("POST", "/api/channels/"+channelID+"/messages", map[string]string{"text": long}); r.Status != 201 {
			return nil, fmt.Errorf("POST message: %d %s", r.Status, r.Body)
		}
		return map[string]bool{"ok": true}, nil
	case "read-file":
		b, err := os.ReadFile(text)
		return map[string]string{"text": string(b)}, err
	case "write-file":
		// channel is the path here.
		return map[string]bool{"ok": true}, os.WriteFile(channelID, []byte(text), 0o644)
	}
	return nil, fmt.Errorf("unknown question %q", ask)
}

// browserPlanner is the Planner the script talks to: an agentconn/client
// attached to the document. Its turn reports two runs (one with stages in a
// tree, one stopped), writes a line, shows an image its own tool made and a
// refused one, then works until Stop aborts it. Stop pauses the live run and
// Resume resumes it, each reporting the runs again.
type browserPlanner struct {
	ta           *testApp
	modelServers []modelserver.Server // what GET /api/model-servers asks

	mu       sync.Mutex
	link     *client.Link
	channel  string   // the document it is attached to
	stops    []string // the run each stop named ("" for all)
	resumes  []string
	reported int
	model    string // what the last turn was asked to run
	level    string
	failed   bool     // the "fail once" turn failed already
	files    []string // the last turn's attachments, as name:kind
	prompt   string   // the last command turn's prompt
	steers   []string // the messages the running turn was offered
	other    string   // the last prompt of any other turn
	checkout string   // the local checkout it reports reading, if any
	noGit    bool     // it reports that Git was not found
	noSteer  bool     // it does not offer steer-turn

	// Isolated turns (descriptions): answered with description, after
	// describeGate closes when it is set.
	description  string
	describeGate chan struct{}
}

// browserDescription is the description the Planner writes once the
// script asks for it: markup in it must show as text.
const browserDescription = "Plan for the <b>spring</b> launch"

// describe answers an isolated turn: a description, never Chat.
func (bp *browserPlanner) describe(ctx context.Context, t *client.Turn) error {
	bp.mu.Lock()
	gate, text := bp.describeGate, bp.description
	bp.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		bp.mu.Lock()
		text = bp.description
		bp.mu.Unlock()
	}
	if text == "" {
		text = "Plan for the launch"
	}
	b, _ := json.Marshal(map[string]string{"description": text})
	return t.Text(string(b))
}

// plannerCommandsReported are the commands the client reports: a skill, a
// workflow whose name holds a space, and a prompt.
var plannerCommandsReported = []map[string]string{
	{"name": "review", "description": "Review the plan", "kind": "skill"},
	{"name": "release notes", "description": "Write the release notes", "kind": "workflow"},
	{"name": "retro", "kind": "prompt"},
}

// reportCatalog reports the catalog: two models and the commands, but those
// named in without.
func (bp *browserPlanner) reportCatalog(without ...string) error {
	bp.mu.Lock()
	l := bp.link
	bp.mu.Unlock()
	if l == nil {
		return errors.New("no Planner attached")
	}
	cmds := []map[string]string{}
	for _, c := range plannerCommandsReported {
		if !slices.Contains(without, c["name"]) {
			cmds = append(cmds, c)
		}
	}
	catalog := map[string]any{"models": json.RawMessage(`{"available": [
		{"id": "m-one", "name": "Model One", "provider": {"id": "acme", "name": "Acme"}, "thinkingLevels": ["low", "xhigh", "Default"]},
		{"id": "m-two", "name": "Model Two", "provider": {"id": "acme", "name": "Acme"}}],
		"default": {"id": "m-two"}}`), "commands": cmds}
	bp.mu.Lock()
	if bp.checkout != "" {
		// As chopin planner reports the checkout it reads.
		catalog["checkout"] = map[string]any{"path": bp.checkout, "branch": "main", "head": strings.Repeat("ab", 20), "git": !bp.noGit}
	}
	bp.mu.Unlock()
	return l.ReportCapabilities(catalog)
}

func (bp *browserPlanner) attach(channelID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	features, handler := []string{"capability-catalog", "attachments", "steer-turn"}, client.Handler{Turn: bp.turn, Stop: bp.stop, Resume: bp.resume, Steer: bp.steer}
	if bp.noSteer {
		features, handler.Steer = features[:2], nil
	}
	l, err := client.Dial(ctx, client.Config{URL: bp.ta.AgentURL(), Token: bp.ta.Token(), Document: channelID,
		Features: features, Handler: handler})
	if err != nil {
		return err
	}
	bp.ta.T.Cleanup(func() { l.Close() })
	bp.mu.Lock()
	bp.link, bp.channel = l, channelID
	bp.mu.Unlock()
	// Its catalog, for the composer's picker and commands: as written.
	return bp.reportCatalog()
}

// steer refuses every message offered to the running turn, so Chat gets
// the system line that says it was not read.
func (bp *browserPlanner) steer(_ *client.Turn, prompt string) (bool, string) {
	bp.mu.Lock()
	bp.steers = append(bp.steers, prompt)
	bp.mu.Unlock()
	return false, "the build is half done"
}

func (bp *browserPlanner) seen() map[string]any {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return map[string]any{"stops": append([]string{}, bp.stops...), "resumes": append([]string{}, bp.resumes...), "reported": bp.reported,
		"model": bp.model, "thinkingLevel": bp.level, "files": append([]string{}, bp.files...),
		"prompt": bp.prompt, "steers": append([]string{}, bp.steers...), "other": bp.other}
}

// browserRuns are the runs the Planner reports, the first one's status as
// given. Its stages: plan done; compile failed, with link (running) under
// it, which shows as stopped; test running, with unit (done) under it; and
// 3 earlier stages counted, not sent. The second run stopped with a stage
// still running, which shows as stopped.
func browserRuns(status string) []wire.RunCard {
	three := 3
	ended := int64(1796016500)
	return []wire.RunCard{
		{ID: "run-build", Name: "Build and test", Status: status, Started: 1796016400, Updated: 1796016460, EarlierStages: &three, Waiting: 0,
			Stages: []wire.Stage{
				{ID: "plan", Name: "Plan the build", Status: "completed"},
				{ID: "compile", Name: "Compile", Status: "failed"},
				{ID: "link", Name: "Link binaries", ParentIDs: []string{"compile"}, Status: "running"},
				{ID: "test", Name: "Run the tests", Status: "running"},
				{ID: "unit", Name: "Unit tests", ParentIDs: []string{"test"}, Kind: "tool", Status: "completed"},
			}},
		{ID: "run-docs", Name: "Publish the docs", Status: "stopped", Started: 1796016300, Updated: 1796016500, Ended: &ended,
			Stages: []wire.Stage{{ID: "upload", Name: "Upload pages", Status: "running"}}},
	}
}

func (bp *browserPlanner) report(s *client.Session, status string) error {
	bp.mu.Lock()
	bp.reported++
	bp.mu.Unlock()
	active := []string{"run-build"}
	var paused []string
	if status == "paused" {
		paused = active
	}
	return s.ReportRuns(active, paused, browserRuns(status))
}

// browserPNG is a small picture for the gallery.
func browserPNG() string {
	img := image.NewRGBA(image.Rect(0, 0, 96, 64))
	for y := 0; y < 64; y++ {
		for x := 0; x < 96; x++ {
			img.Set(x, y, color.RGBA{R: uint8(40 + x), G: uint8(90 + y), B: 200, A: 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// said is what a turn asks, without the lines said in the room since the
// Planner's last finished reply that the prompt repeats first (none of this
// test's messages holds a blank line, so the first one ends that part).
func said(prompt string) string {
	const since = "Said in the room since your last reply:\n"
	if rest, ok := strings.CutPrefix(prompt, since); ok {
		if _, message, ok := strings.Cut(rest, "\n\n"); ok {
			return message
		}
	}
	return prompt
}

func (bp *browserPlanner) turn(ctx context.Context, t *client.Turn) error {
	if t.Session.Mode == wire.ModeIsolated {
		return bp.describe(ctx, t)
	}
	message := said(t.Prompt())
	bp.mu.Lock()
	bp.model, bp.level = t.Message.Model, t.Message.ThinkingLevel
	bp.files = nil
	for _, f := range t.Message.Attachments {
		bp.files = append(bp.files, f.Name+":"+f.Kind)
	}
	flaky := strings.Contains(message, "fail once")
	failed := bp.failed
	if flaky {
		bp.failed = true
	}
	bp.mu.Unlock()
	if strings.Contains(message, "revise exactly this passage") {
		return bp.revise(ctx, t)
	}
	if strings.Contains(message, "look at these") {
		return t.Text("Seen the notes.")
	}
	if strings.Contains(message, "ask me first") {
		// It asks, and works on until Stop Planner aborts the turn.
		_, err := t.CallTool(ctx, "ask", map[string]any{"questions": []map[string]any{{
			"question": "Which region?\nThe data stays there.", "header": "Region",
			"options": []map[string]string{{"label": "EU", "description": "Frankfurt"}, {"label": "US", "description": "Ohio"}}}}})
		if err != nil && ctx.Err() == nil && !t.Aborted() {
			return err
		}
		return nil
	}
	if strings.Contains(message, "revise the plan") {
		return bp.reviseBlocks(ctx, t)
	}
	if p := message; strings.HasPrefix(p, "/") || strings.HasPrefix(p, "Start the workflow") {
		bp.mu.Lock()
		bp.prompt = p
		bp.mu.Unlock()
		return t.Text("Ran the command.")
	}
	if flaky {
		// The first attempt fails part way; Retry's attempt answers.
		if failed {
			return t.Text("Here is the whole answer.")
		}
		_ = t.Text("Half an ans")
		return errors.New("The model's provider is down.")
	}
	if !strings.Contains(message, "build and test") {
		// Anything else, such as an answer nobody waited on, is noted.
		bp.mu.Lock()
		bp.other = t.Prompt()
		bp.mu.Unlock()
		return t.Text("Noted.")
	}
	if err := bp.report(t.Session, "running"); err != nil {
		return err
	}
	if err := t.Text("Building it now. Stop me when you have seen enough."); err != nil {
		return err
	}
	if err := t.DeclareTools("draw_chart"); err != nil {
		return err
	}
	err := t.OwnTool("draw_chart", map[string]string{"of": "build times"}, func() (any, error) {
		return map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "Drew the chart."},
			map[string]any{"type": "image", "data": browserPNG(), "mimeType": "image/png", "alt": "Build times chart", "caption": "Build times this week"},
			map[string]any{"type": "image", "data": "PHN2Zy8+", "mimeType": "image/svg+xml"},
		}}, nil
	})
	if err != nil {
		return err
	}
	<-ctx.Done() // works until Stop Planner aborts the turn
	return nil
}

// reviseBlocks is a turn that edits the plan as a Planner does (read_plan,
// then one edit_plan): it changes one block, removes one and adds one, for
// the script's step on the Planner's changes marked.
func (bp *browserPlanner) reviseBlocks(ctx context.Context, t *client.Turn) error {
	if _, err := t.CallTool(ctx, "read_plan", map[string]any{}); err != nil {
		return err
	}
	bp.mu.Lock()
	channel := bp.channel
	bp.mu.Unlock()
	var plan room.Plan
	bp.ta.Do("GET", "/api/channels/"+channel+"/plan", nil).JSON(bp.ta.T, &plan)
	lines := strings.Split(plan.Source, "\n")
	find := func(text string) *int {
		for _, b := range plan.Blocks {
			if strings.Join(lines[b.StartLine-1:b.EndLine], "\n") == text {
				return &b.Index
			}
		}
		return nil
	}
	revised, gone := find("This sentence will be revised."), find("This line will go.")
	if revised == nil || gone == nil {
		return t.Text("The plan does not hold the passages to revise.")
	}
	content := func(s string) *string { return &s }
	_, err := t.CallTool(ctx, "edit_plan", room.EditPlanArgs{Revision: plan.Revision, Operations: []room.Operation{
		{Op: room.OpReplace, Index: revised, Content: content("This sentence was revised by the Planner.")},
		{Op: room.OpDelete, Index: gone},
		{Op: room.OpInsertRoot, Content: content("A step the Planner added.")},
	}})
	if err != nil {
		return err
	}
	return t.Text("Revised the plan.")
}

func (bp *browserPlanner) stop(s *client.Session, run string) (bool, string) {
	bp.mu.Lock()
	bp.stops = append(bp.stops, run)
	bp.mu.Unlock()
	if err := bp.report(s, "paused"); err != nil {
		return false, err.Error()
	}
	return true, "Paused at Run the tests."
}

func (bp *browserPlanner) resume(s *client.Session, run string) (bool, string) {
	bp.mu.Lock()
	bp.resumes = append(bp.resumes, run)
	bp.mu.Unlock()
	if err := bp.report(s, "running"); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// revise answers an accepted comment's turn as a Planner would: it reads
// the plan, rewrites the block holding the quoted passage with "Postgres"
// made "SQLite", and says so.
func (bp *browserPlanner) revise(ctx context.Context, t *client.Turn) error {
	quote := ""
	if _, rest, ok := strings.Cut(t.Prompt(), "reads:\n> "); ok {
		quote, _, _ = strings.Cut(rest, "\n")
	}
	out, err := t.CallTool(ctx, room.ToolReadPlan, map[string]any{})
	if err != nil {
		return err
	}
	var page string
	if err := json.Unmarshal(out, &page); err != nil {
		return err
	}
	m := revisionLine.FindStringSubmatch(page)
	if m == nil || quote == "" {
		return t.Text("I could not find the passage.")
	}
	_, text, _ := strings.Cut(page, "\ntext:\n")
	source := strings.Split(text, "\n")
	for _, l := range strings.Split(page, "\n") {
		var i, s, e int
		var typ, digest string
		if n, _ := fmt.Sscanf(l, "%d %s %d-%d %s", &i, &typ, &s, &e, &digest); n != 5 || e > len(source) {
			continue
		}
		block := strings.Join(source[s-1:e], "\n")
		if !strings.Contains(block, quote) {
			continue
		}
		revised := strings.ReplaceAll(block, "Postgres", "SQLite")
		input := fmt.Sprintf(`{"revision":%s,"operations":[{"op":"replace","index":%d,"content":%q}]}`, m[1], i, revised)
		if _, err := t.CallToolID(ctx, "call-revise", room.ToolEditPlan, input); err != nil {
			return err
		}
		return t.Text("Revised the passage.")
	}
	return t.Text("I could not find the passage.")
}
