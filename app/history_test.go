package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// replaceAt is a CodeMirror ChangeSet JSON replacing del units at pos of a
// document of length n (ASCII, so bytes are UTF-16 units) with text.
func replaceAt(pos, del, n int, text string) json.RawMessage {
	var parts []any
	if pos > 0 {
		parts = append(parts, pos)
	}
	parts = append(parts, append([]any{del}, toAny(strings.Split(text, "\n"))...))
	if rest := n - pos - del; rest > 0 {
		parts = append(parts, rest)
	}
	raw, _ := json.Marshal(parts)
	return raw
}

// versionsPage is GET …/versions.
type versionsPage struct {
	Versions []room.Version `json:"versions"`
	Next     *int64         `json:"next"`
}

// allVersions reads every kept version, limit at a time, newest first.
func (ta *testApp) allVersions(t *testing.T, id string, limit int) []room.Version {
	t.Helper()
	var out []room.Version
	path := fmt.Sprintf("/api/channels/%s/versions?limit=%d", id, limit)
	for {
		var page versionsPage
		r := ta.Do("GET", path, nil)
		apptest.Want(t, r, 200, "")
		r.JSON(t, &page)
		out = append(out, page.Versions...)
		if page.Next == nil {
			return out
		}
		if len(page.Versions) != limit {
			t.Fatalf("a page with a next page holds %d versions, not %d", len(page.Versions), limit)
		}
		path = fmt.Sprintf("/api/channels/%s/versions?limit=%d&before=%d", id, limit, *page.Next)
	}
}

// versionSource is GET …/versions/:version's source.
func (ta *testApp) versionSource(t *testing.T, id string, v int64) string {
	t.Helper()
	var got struct {
		Version int64
		Source  string
	}
	r := ta.Do("GET", fmt.Sprintf("/api/channels/%s/versions/%d", id, v), nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &got)
	return got.Source
}

// tabPush pushes one change from tab at version and waits for its ack.
func tabPush(t *testing.T, tab *apptest.Room, version int64, changes json.RawMessage) int64 {
	t.Helper()
	id := fmt.Sprintf("p%d", version)
	tab.Send(map[string]any{"type": "plan:push", "id": id, "version": version,
		"updates": []any{map[string]any{"clientID": "tab-1", "changes": changes}}})
	for {
		m := tab.Next()
		if m["type"] == "error" && m["id"] == id {
			t.Fatalf("push at %d: %v", version, m)
		}
		if m["type"] == "plan:ack" && m["id"] == id {
			return int64(m["version"].(float64))
		}
	}
}

// TestHistoryAttribution: each kind of change is kept with its author: a
// person's typing by login, an HTTP PUT as the server's, an MCP client's
// update by its clientInfo name, a restore by the person who restored.
func TestHistoryAttribution(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Kept")
	tab := ta.DialRoom(ch.ID)
	tab.OpenPlan()

	v1 := tabPush(t, tab, 0, insertAt(7, 7, "\nTyped."))
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": v1, "source": "# Kept\n\n## Goals\n\nPut.\n"}), 200, "")
	cs := ta.mcpSession("codex")
	wantOK(t, callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": 2,
		"plan": "# Kept\n\n## Goals\n\nPut.\n\nBy MCP.\n", "idempotencyKey": "k1"}), "update_document")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/1/restore", nil), 200, "")

	vs := ta.allVersions(t, ch.ID, 50)
	type row struct {
		v    int64
		kind string
		name string
	}
	var got []row
	for _, v := range vs {
		got = append(got, row{v.Version, v.Author.Kind, v.Author.Name})
	}
	want := []row{{4, "restore", "ada"}, {3, "mcp", "codex"}, {2, "server", ""}, {1, "person", "ada"}, {0, "server", ""}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	if vs[3].Summary != "added 1 block, under “Kept”" || vs[1].Summary != "added 1 block, under “Goals”" || vs[4].Summary != "the earliest version kept" {
		t.Errorf("summaries %+v", vs)
	}
	if vs[0].Time <= 0 {
		t.Errorf("time %d", vs[0].Time)
	}
	if s := ta.versionSource(t, ch.ID, 4); s != "# Kept\n\nTyped." {
		t.Errorf("restored text %q", s)
	}
}

// TestHistoryPlannerAttribution: the Planner's edit_plan is kept as the
// Planner's, with its turn.
func TestHistoryPlannerAttribution(t *testing.T) {
	ta, ch, browser := startWithLaunch(t)
	model := newFakeModelServer(t)
	runPlanner(t, ta.plannerEnv(model), ta.app.URL()+ch.URL, "--model", "qwen2.5")
	for {
		if st := browser.Until("planner:status")["planner"].(map[string]any); st["state"] == "attached" {
			break
		}
	}
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin add a risks section"})
	for {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" && m["status"] != "streaming" {
			break
		}
	}
	vs := ta.allVersions(t, ch.ID, 10)
	if len(vs) != 2 || vs[0].Author.Kind != "planner" || vs[0].Author.Turn == "" || vs[0].Author.Model != "qwen2.5" || vs[0].Summary != "added 2 blocks, under “Risks”" {
		t.Fatalf("versions %+v", vs)
	}
	t.Logf("planner author %+v", vs[0].Author)
}

// TestHistoryTextAtEveryVersion is the property: random edits by several
// authors (a tab's typing, HTTP PUTs, an MCP client's updates), and every
// kept version's text, read back through the API in pages, before and
// after a restart, is the text a model applying the same edits to plain
// strings had at that version.
func TestHistoryTextAtEveryVersion(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Model")
	tab := ta.DialRoom(ch.ID)
	tab.OpenPlan()
	cs := ta.mcpSession("claude-code")

	rng := rand.New(rand.NewPCG(31, 7))
	words := []string{"alpha", "beta", "\n", "\n\n## Part\n\n", "- item\n", "gamma ", "delta."}
	text := "# Model\n"
	want := map[int64]string{0: text}
	var version int64
	for range 120 {
		switch k := rng.IntN(10); {
		case k < 7: // a tab types or deletes
			pos := rng.IntN(len(text) + 1)
			del := 0
			if pos < len(text) && rng.IntN(3) == 0 {
				del = 1 + rng.IntN(min(5, len(text)-pos))
			}
			ins := words[rng.IntN(len(words))]
			if del > 0 && rng.IntN(2) == 0 {
				ins = ""
			}
			next := text[:pos] + ins + text[pos+del:]
			if next == text || !strings.Contains(next, "Model") {
				continue
			}
			version = tabPush(t, tab, version, replaceAt(pos, del, len(text), ins))
			text = next
		case k < 9: // a script replaces it over HTTP
			next := text + "\nPut " + fmt.Sprint(rng.IntN(100)) + ".\n"
			var plan room.Plan
			r := ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": version, "source": next})
			apptest.Want(t, r, 200, "")
			r.JSON(t, &plan)
			version, text = plan.Revision, next
		default: // an MCP client rewrites a line
			next := strings.Replace(text, "alpha", "ALPHA", 1)
			if next == text {
				next = text + "mcp\n"
			}
			o := callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": version, "plan": next,
				"idempotencyKey": fmt.Sprint("k", version)})
			wantOK(t, o, "update_document")
			version, text = o.num("revision"), next
		}
		want[version] = text
	}

	check := func() {
		t.Helper()
		vs := ta.allVersions(t, ch.ID, 7)
		if int64(len(vs)) != version+1 {
			t.Fatalf("%d versions kept, want %d", len(vs), version+1)
		}
		for i, v := range vs {
			if v.Version != version-int64(i) {
				t.Fatalf("versions out of order at %d: %d", i, v.Version)
			}
			if got := ta.versionSource(t, ch.ID, v.Version); got != want[v.Version] {
				t.Fatalf("version %d is %q, want %q", v.Version, got, want[v.Version])
			}
			if v.Version > 0 && v.Summary != room.ChangeSummary(want[v.Version-1], want[v.Version]) {
				t.Fatalf("version %d summary %q", v.Version, v.Summary)
			}
		}
	}
	check()
	cs.Close()
	tab.Conn.Close()
	ta.Stop()
	ta = startAppWith(t, cfg)
	check()
}

// TestHistoryPruning: changes older than the detail window are pruned to
// one snapshot per period, at most the configured count, newest kept; the
// detail and the snapshots read back as they were, and a pruned version
// answers 404 naming the nearest kept ones.
func TestHistoryPruning(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.HistoryDetailDays, cfg.HistoryDetailChanges, cfg.HistorySnapshotHours, cfg.HistorySnapshots = 2, 1000, 24, 3
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Pruned")
	tab := ta.DialRoom(ch.ID)
	tab.OpenPlan()

	// Ten days, three edits a day, the clock moved by hand.
	day0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var now time.Time
	ta.app.store.SetClock(func() time.Time { return now })
	text := "# Pruned\n"
	want := map[int64]string{}
	var version int64
	lastOfDay := map[int]int64{}
	for day := range 10 {
		for e := range 3 {
			now = day0.Add(time.Duration(day)*24*time.Hour + time.Duration(e)*time.Hour)
			ins := fmt.Sprintf("d%d e%d\n", day, e)
			version = tabPush(t, tab, version, insertAt(len(text), len(text), ins))
			text += ins
			want[version] = text
			lastOfDay[day] = version
		}
	}
	now = day0.Add(10*24*time.Hour - time.Hour) // day 10, 8:00: days 8 and 9 are within 2 days
	if err := ta.app.pruneHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	var kept []int64
	for _, v := range ta.allVersions(t, ch.ID, 100) {
		kept = append(kept, v.Version)
		if got := ta.versionSource(t, ch.ID, v.Version); got != want[v.Version] && v.Version > 0 {
			t.Errorf("version %d is %q, want %q", v.Version, got, want[v.Version])
		}
	}
	// Detail: every change of days 8 and 9 (versions 25 to 30); before it,
	// the newest 3 snapshots: the last of days 6 and 7 and the one the
	// detail starts from, which is day 7's last too.
	wantKept := []int64{30, 29, 28, 27, 26, 25, lastOfDay[7], lastOfDay[6], lastOfDay[5]}
	if fmt.Sprint(kept) != fmt.Sprint(wantKept) {
		t.Fatalf("kept %v, want %v", kept, wantKept)
	}
	r := ta.Do("GET", "/api/channels/"+ch.ID+"/versions/20", nil)
	apptest.Want(t, r, 404, "version-not-found")
	if !strings.Contains(string(r.Body), "The nearest kept versions are 18 and 21.") {
		t.Errorf("404 message %s", r.Body)
	}
	// Pruning again changes nothing; the next change after it reads back.
	if err := ta.app.pruneHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	version = tabPush(t, tab, version, insertAt(len(text), len(text), "after\n"))
	if got := ta.versionSource(t, ch.ID, version); got != text+"after\n" {
		t.Errorf("after pruning: %q", got)
	}
	if n := len(ta.allVersions(t, ch.ID, 100)); n != len(wantKept)+1 {
		t.Errorf("%d versions after a second prune and an edit", n)
	}
	want[version] = text + "after\n"
	text += "after\n"

	// Three days on, pruned again: what was detail becomes daily versions,
	// the oldest kept ones go, and every kept one still reads as it was.
	for day := 11; day < 14; day++ {
		now = day0.Add(time.Duration(day) * 24 * time.Hour)
		ins := fmt.Sprintf("d%d\n", day)
		version = tabPush(t, tab, version, insertAt(len(text), len(text), ins))
		text += ins
		want[version] = text
	}
	if err := ta.app.pruneHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	kept = nil
	for _, v := range ta.allVersions(t, ch.ID, 100) {
		kept = append(kept, v.Version)
		if got := ta.versionSource(t, ch.ID, v.Version); got != want[v.Version] {
			t.Errorf("after the third prune, version %d is %q, want %q", v.Version, got, want[v.Version])
		}
	}
	// Day 13, 9:00, 2 days of detail: the edits of days 11 to 13 (versions
	// 32 to 34); before them the last of days 10 (31, the edit after the
	// second prune), 9 and 8, at most 3; 24, 21 and 18 go.
	if fmt.Sprint(kept) != "[34 33 32 31 30 27]" {
		t.Errorf("kept after the third prune %v", kept)
	}
}

// TestHistoryRestore: restoring a version is a new change on top, which an
// open tab rebases through like any server change, said in Chat; the next
// push of the tab lands on it. Refused on an archived document, and a
// version never made answers 404.
func TestHistoryRestore(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Back")
	tab := ta.DialRoom(ch.ID)
	tab.OpenPlan()
	v1 := tabPush(t, tab, 0, insertAt(7, 7, "\nFirst draft.\n"))
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": v1, "source": "# Back\n\nSecond draft, all new.\n"}), 200, "")

	// A restart in between: the history is durable.
	tab.Conn.Close()
	ta.Stop()
	ta = startAppWith(t, cfg)
	tab = ta.DialRoom(ch.ID)
	snap := tab.OpenPlan()
	epoch := snap["epoch"].(string)

	var plan room.Plan
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/versions/1/restore", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &plan)
	if plan.Source != "# Back\n\nFirst draft.\n" || plan.Revision != 3 {
		t.Fatalf("restored plan %+v", plan)
	}
	upd := tab.Until("plan:updates")
	us := upd["updates"].([]any)
	if upd["version"] != 2.0 || upd["epoch"] != epoch || len(us) != 1 || us[0].(map[string]any)["clientID"] != "server" {
		t.Fatalf("the tab got %v", upd)
	}
	// The change set is the two texts' comparison, exactly.
	got, _ := json.Marshal(us[0].(map[string]any)["changes"])
	wantCS, _ := room.DiffChangeSet("# Back\n\nSecond draft, all new.\n", "# Back\n\nFirst draft.\n").MarshalJSON()
	if string(got) != string(wantCS) {
		t.Errorf("changes %s, want %s", got, wantCS)
	}
	// A tab whose edit was made before the restore is told it is stale,
	// catches up through the restore's update, rebases, and pushes on top.
	late := ta.DialRoom(ch.ID)
	late.Send(map[string]any{"type": "plan:push", "id": "late", "version": 2,
		"updates": []any{map[string]any{"clientID": "tab-2", "changes": insertAt(0, 32, "x")}}})
	if e := late.Until("error"); e["code"] != "stale-version" || e["version"] != 3.0 {
		t.Fatalf("a push from before the restore: %v", e)
	}
	late.Send(map[string]any{"type": "plan:open", "id": "o2", "epoch": epoch, "version": 2})
	if missed := late.Until("plan:updates"); len(missed["updates"].([]any)) != 1 {
		t.Fatalf("catching up through the restore: %v", missed)
	}
	v4 := tabPush(t, late, 3, insertAt(len(plan.Source), len(plan.Source), "More.\n"))
	if s := ta.versionSource(t, ch.ID, v4); s != "# Back\n\nFirst draft.\nMore.\n" {
		t.Errorf("after the restore %q", s)
	}
	var list struct{ Messages []room.Message }
	ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).JSON(t, &list)
	last := list.Messages[len(list.Messages)-1].Text
	if !strings.HasPrefix(last, "Ada restored the version of ") || !strings.HasSuffix(last, " (revision 1).") {
		t.Errorf("chat line %q", last)
	}
	// Restoring what the plan already reads changes nothing.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/4/restore", nil), 200, "")
	if vs := ta.allVersions(t, ch.ID, 50); len(vs) != 5 {
		t.Errorf("%d versions after a restore of the current text", len(vs))
	}

	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/99/restore", nil), 404, "version-not-found")
	apptest.Want(t, ta.Do("GET", "/api/channels/"+ch.ID+"/versions/x", nil), 400, "invalid-version")
	apptest.Want(t, ta.Do("GET", "/api/channels/"+ch.ID+"/versions?limit=0", nil), 400, "invalid-argument")
	ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/versions/1/restore", nil), 409, "document-archived")
}

// TestHistoryOverMCP: list_versions pages the versions, read_document reads
// the plan as it was at one (and its next: continues at that version), and
// a version not kept is refused naming the nearest.
func TestHistoryOverMCP(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Agents")
	cs := ta.mcpSession("codex")
	texts := []string{"# Agents\n", "# Agents\n\nOne.\n", "# Agents\n\nOne.\n\nTwo.\n", "# Agents\n\n" + strings.Repeat("Long line.\n", 3000)}
	for i, text := range texts[1:] {
		wantOK(t, callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": i, "plan": text,
			"idempotencyKey": fmt.Sprint("k", i)}), "update_document")
	}

	var seen []float64
	args := map[string]any{"id": ch.ID, "limit": 3}
	for {
		o := callTool(t, cs, "list_versions", args)
		wantOK(t, o, "list_versions")
		for _, v := range o.Data["versions"].([]any) {
			v := v.(map[string]any)
			seen = append(seen, v["version"].(float64))
			if a := v["author"].(map[string]any); v["version"] != 0.0 && (a["kind"] != "mcp" || a["name"] != "codex") {
				t.Errorf("author %v", a)
			}
		}
		if o.Data["nextBefore"] == nil {
			break
		}
		args["before"] = o.Data["nextBefore"]
	}
	if fmt.Sprint(seen) != "[3 2 1 0]" {
		t.Fatalf("versions %v", seen)
	}

	o := callTool(t, cs, "read_document", map[string]any{"id": ch.ID, "version": 1})
	wantOK(t, o, "read_document")
	if o.num("revision") != 1 || !strings.HasPrefix(o.Text, "version: 1, as the plan was then; it is now at revision 3") ||
		!strings.Contains(o.Text, "One.") || strings.Contains(o.Text, "Two.") {
		t.Fatalf("read at version 1: %v\n%s", o.Data, o.Text)
	}
	// A long version pages, and its next: stays at that version.
	o = callTool(t, cs, "read_document", map[string]any{"id": ch.ID, "version": 3})
	next, _ := o.Data["next"].(map[string]any)
	if next == nil || next["version"] != 3.0 {
		t.Fatalf("next of a long version: %v", o.Data["next"])
	}
	// The text's next: line, for the clients that show their model only
	// the text, names the version too.
	if !strings.Contains(o.Text, `next: read_document {"id":"`+ch.ID+`","version":3,`) {
		t.Fatalf("the next: line of a long version does not name it:\n%s", o.Text[max(0, len(o.Text)-300):])
	}
	wantRefusal(t, callTool(t, cs, "read_document", map[string]any{"id": ch.ID, "version": 9}), "version-not-found")
	wantInvalidParams(t, cs, "list_versions", map[string]any{"id": ch.ID, "limit": 500})
}

// TestHistoryCommands: chopin history lists the versions through the
// running Chopin, and chopin export --version writes one as it was.
func TestHistoryCommands(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	ch := ta.CreateDocument("acme/rocket", "Launch plan")
	cs := ta.mcpSession("codex")
	wantOK(t, callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": 0,
		"plan": "# Launch plan\n\n## Goals\n\nFly.\n", "idempotencyKey": "a"}), "update_document")
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 1, "source": "# Launch plan\n\nLater.\n"}), 200, "")

	cli, stdout, stderr := cliIn(dir)
	if code := cli.Run(context.Background(), []string{"history", "acme/rocket/launch-plan"}); code != 0 {
		t.Fatalf("history: exit %d\n%s%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "VERSION") || !strings.HasPrefix(lines[2], "1 ") ||
		!strings.Contains(lines[2], "codex (MCP)") || !strings.Contains(lines[2], "added 2 blocks, under “Goals”") ||
		!strings.Contains(lines[1], "server") {
		t.Fatalf("history:\n%s", stdout)
	}

	stdout.Reset()
	if code := cli.Run(context.Background(), []string{"export", "acme/rocket/launch-plan", "--version", "1"}); code != 0 {
		t.Fatalf("export --version: exit %d\n%s%s", code, stdout, stderr)
	}
	if stdout.String() != "# Launch plan\n\n## Goals\n\nFly.\n" {
		t.Fatalf("export --version 1: %q", stdout)
	}
	stderr.Reset()
	if code := cli.Run(context.Background(), []string{"export", "acme/rocket/launch-plan", "--version", "7"}); code != 1 ||
		!strings.Contains(stderr.String(), "does not keep version 7") {
		t.Fatalf("export --version 7: exit %d\n%s", code, stderr)
	}
}
