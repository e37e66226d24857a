package app

// Chopin reads back every file it writes: each kind of document the tests
// make (plain, from a file with CRLF line endings, with an image, with
// decision cards answered, cancelled and open, with an accepted comment) is
// downloaded as "Download .md" and `chopin export` write it, and imported
// again into the same repository and into another. A document without
// records comes back byte for byte; <Decision /> and <Comment /> lines come
// back as the text decisions=inline writes for them; a title already taken
// becomes the next free one, and the answer says so.

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// importedJSON is an import's answer: the Channel, and a notice when the
// title had to change.
type importedJSON struct {
	channelJSON
	Notice string `json:"notice"`
}

func (ta *testApp) importFile(t *testing.T, repo, fileName string, data []byte) (importedJSON, apptest.Response) {
	t.Helper()
	r := ta.Do("POST", "/api/repositories/"+repo+"/imports?"+url.Values{"fileName": {fileName}}.Encode(), string(data))
	var out importedJSON
	if r.Status == 201 {
		r.JSON(t, &out)
	}
	return out, r
}

func (ta *testApp) deleteDocument(t *testing.T, id string) {
	t.Helper()
	apptest.Want(t, ta.Do("POST", "/api/channels/"+id+"/archive", nil), 200, "")
	apptest.Want(t, ta.Do("DELETE", "/api/channels/"+id, nil), 204, "")
}

func (ta *testApp) planFile(t *testing.T, id, decisions string) string {
	t.Helper()
	r := ta.Do("GET", "/api/channels/"+id+"/plan.md?decisions="+decisions, nil)
	apptest.Want(t, r, 200, "")
	return string(r.Body)
}

// askingPlanner asks each question a person's message names, one ask call
// each, in order.
func askingPlanner(t *testing.T, ta *testApp, channelID string, questions ...string) {
	t.Helper()
	turn := func(ctx context.Context, tn *client.Turn) error {
		if tn.Session.Mode == wire.ModeIsolated {
			return tn.Text(descriptionJSON("Plan for a test"))
		}
		for _, q := range questions {
			if _, err := tn.CallTool(ctx, "ask", map[string]any{"questions": []map[string]any{{
				"question": q, "header": "Q", "options": []map[string]string{{"label": "SQLite", "description": "one file"}, {"label": "Postgres", "description": "a server"}}}}}); err != nil {
				return err
			}
		}
		return tn.Text("Asked.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: channelID, Handler: client.Handler{Turn: turn}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// openCard waits for the document's open card asking question.
func (ta *testApp) openCard(t *testing.T, channelID, question string) string {
	t.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for time.Now().Before(deadline) {
		var ds struct{ Decisions []room.Decision }
		ta.Do("GET", "/api/channels/"+channelID+"/decisions", nil).JSON(t, &ds)
		for _, d := range ds.Decisions {
			if d.Status == room.DecisionOpen && strings.Contains(string(d.Call), question) {
				return d.ID
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no open card asks %q", question)
	return ""
}

func TestExportImportEveryKindOfDocument(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("octo/plans")
	ta.AddRepository("octo/other")
	type kind struct {
		name, id string
		records  bool
	}
	var kinds []kind

	plain := ta.CreateDocument("octo/plans", "Plain plan")
	kinds = append(kinds, kind{"plain", plain.ID, false})

	crlf, r := ta.importFile(t, "octo/plans", "launch.md", []byte(planFixture))
	apptest.Want(t, r, 201, "")
	kinds = append(kinds, kind{"CRLF, emoji, MDX, no final newline", crlf.ID, false})

	edited := ta.CreateDocument("octo/plans", "Edited")
	ta.putPlan(t, edited.ID, 0, "\uFEFF# Edited\n\n\tTabbed, trailing spaces  \n\nÜnïcödé, zero\u200bwidth, 👩‍🚀\n\n\n")
	kinds = append(kinds, kind{"a byte order mark, tabs, blank lines at the end", edited.ID, false})

	pictured := ta.CreateDocument("octo/plans", "Pictured")
	img := storeTestImage(t, ta, pictured.ID, 8, 6)
	ta.putPlan(t, pictured.ID, 0, "# Pictured\n\n![A test picture]("+room.ImagePath(img)+")\n")
	kinds = append(kinds, kind{"an image", pictured.ID, false})

	commented := ta.CreateDocument("octo/plans", "Launch") // as its plan's heading
	rev := ta.putPlan(t, commented.ID, 0, commentPlan)
	start := newThreadFor(t, commentPlan, rev, "Postgres for everything", "Why not SQLite?\nIt is one file.")
	delete(start, "type")
	delete(start, "id")
	var th room.Thread
	ta.Do("POST", "/api/channels/"+commented.ID+"/comments", start).JSON(t, &th)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+commented.ID+"/comments/"+th.ID+"/accept", nil), 200, "")
	kinds = append(kinds, kind{"an accepted comment", commented.ID, true})

	asked := ta.CreateDocument("octo/plans", "Asked")
	ta.putPlan(t, asked.ID, 0, "# Asked\n\nWhich store do we use?\n")
	browser := ta.DialRoom(asked.ID)
	askingPlanner(t, ta, asked.ID, "Which store?", "Which region?", "Which cache?")
	ta.waitAttached(browser, asked.ID)
	browser.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "@chopin ask"})
	apptest.Want(t, ta.Do("POST", "/api/channels/"+asked.ID+"/decisions/"+ta.openCard(t, asked.ID, "Which store?")+"/answer",
		map[string]any{"labels": []string{"SQLite"}}), 200, "")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+asked.ID+"/decisions/"+ta.openCard(t, asked.ID, "Which region?")+"/cancel", nil), 200, "")
	ta.openCard(t, asked.ID, "Which cache?") // left open
	kinds = append(kinds, kind{"decision cards answered, cancelled and open", asked.ID, true})

	for _, k := range kinds {
		keep, inline := ta.planFile(t, k.id, "keep"), ta.planFile(t, k.id, "inline")
		if !k.records && keep != inline {
			t.Errorf("%s: without records, inline should change nothing", k.name)
		}
		if k.records && (!strings.Contains(keep, " id=\"") || strings.Contains(inline, " id=\"")) {
			t.Errorf("%s: keep should hold the records' lines, inline none:\n%s\n---\n%s", k.name, keep, inline)
		}
		original := ta.channelNow(t, k.id)
		for _, file := range []string{keep, inline} {
			for _, repo := range []string{"octo/plans", "octo/other"} {
				doc, r := ta.importFile(t, repo, original.Slug+".md", []byte(file))
				if r.Status != 201 {
					t.Errorf("%s into %s: %d %s", k.name, repo, r.Status, r.Body)
					continue
				}
				// What comes back is what decisions=inline writes: the
				// file itself when it has no records.
				if got := ta.planFile(t, doc.ID, "keep"); got != inline {
					t.Errorf("%s into %s: exported again\n%q\nwant\n%q", k.name, repo, got, inline)
				}
				title, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(inline, "\uFEFF"), "# "), "\n")
				title = strings.TrimSpace(title)
				switch {
				case repo == "octo/other" && (doc.Title != title || doc.Notice != ""):
					t.Errorf("%s into %s: titled %q (%q), want %q and no notice", k.name, repo, doc.Title, doc.Notice, title)
				case repo == "octo/plans" && (!strings.HasPrefix(doc.Title, title+" ") ||
					!strings.Contains(doc.Notice, "octo/plans already has a document titled “"+title+"”") ||
					!strings.Contains(doc.Notice, "“"+doc.Title+"”")):
					t.Errorf("%s into %s: titled %q, notice %q; want the next free title and a notice", k.name, repo, doc.Title, doc.Notice)
				}
				if repo == "octo/other" && file == keep {
					ta.deleteDocument(t, doc.ID)
				}
			}
		}
	}

	// The copy holds its images itself: they show after the original is
	// deleted.
	copyOf, r := ta.importFile(t, "octo/other", "pictured.md", []byte(ta.planFile(t, pictured.ID, "keep")))
	apptest.Want(t, r, 201, "")
	ta.deleteDocument(t, pictured.ID)
	if r := ta.Do("GET", room.ImagePath(img), nil); r.Status != 200 || string(r.Body) != string(img.Data) {
		t.Errorf("the copy's image after the original was deleted: %d", r.Status)
	}
	_ = copyOf

	// Titles: the next free one each time, counting past the numbers taken.
	for _, want := range []string{"Plain plan 4", "Plain plan 5"} {
		doc, r := ta.importFile(t, "octo/plans", "plain.md", []byte("# Plain plan\n"))
		apptest.Want(t, r, 201, "")
		if doc.Title != want || doc.Notice != "octo/plans already has a document titled “Plain plan”, so this one is “"+want+"”." {
			t.Errorf("titled %q, notice %q; want %q", doc.Title, doc.Notice, want)
		}
	}

	// chopin export and chopin import do the same, and import says so.
	cli, stdout, stderr := cliIn(dir)
	out := filepath.Join(t.TempDir(), "asked.md")
	if code := cli.Run(context.Background(), []string{"export", "octo/plans/asked", "-o", out}); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	if code := cli.Run(context.Background(), []string{"import", out, "--repository", "octo/plans"}); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := stdout.String(); !strings.Contains(got, "octo/plans already has a document titled “Asked”, so this one is “Asked ") {
		t.Errorf("chopin import printed %q", got)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "<Decision id=") {
		t.Errorf("chopin export wrote no record line:\n%s", b)
	}
}

// A record line Chopin does not hold, or the mark of a record written into
// a line of text, is refused, each in words that name what it is and that
// send nobody to a command-line flag.
func TestImportRefusesRecordsItDoesNotHold(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	file := "# Plan\n\n<Decision id=\"d-gone\" />\n\n<Comment id=\"c-gone\" />\n\nSee <Comment id=\"x\" /> here.\n\nAnd <Decision id=\"y\"/> too.\n"
	_, r := ta.importFile(t, "octo/plans", "plan.md", []byte(file))
	apptest.Want(t, r, 400, "invalid-plan-file")
	var e struct{ Message string }
	r.JSON(t, &e)
	for _, want := range []string{
		"line 3: <Decision id=\"d-gone\" /> is the mark of a decision card that this Chopin does not hold",
		"line 5: <Comment id=\"c-gone\" /> is the mark of an accepted comment that this Chopin does not hold",
		"line 7: See <Comment id=\"x\" /> here. holds <Comment, the mark of an accepted comment",
		"line 9: And <Decision id=\"y\"/> too. holds <Decision, the mark of a decision card",
	} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, e.Message)
		}
	}
	if strings.Contains(e.Message, "--") || strings.Contains(e.Message, "chopin export") {
		t.Errorf("the refusal names a command-line flag:\n%s", e.Message)
	}
	lines := strings.Split(e.Message, "\n")
	for _, l := range lines {
		if strings.Contains(l, "<Comment") && strings.Contains(l, "decision card") {
			t.Errorf("a comment called a decision card: %s", l)
		}
	}
	if list := ta.list(t, ""); len(list) != 0 {
		t.Errorf("a refused import left %d documents", len(list))
	}
}
