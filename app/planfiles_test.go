package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/instance"
)

// planFixture is a plan file with what a file can hold that an editor
// would be tempted to change: emoji, CRLF line endings, MDX components, a
// mermaid fence, trailing spaces and no final newline.
const planFixture = "# Launch plan 🚀\r\n\r\nWe ship in three steps — safely. 👩‍🚀  \r\n\r\n" +
	"<Callout type=\"warning\">\r\nFuel first.\r\n</Callout>\r\n\r\n" +
	"<Tabs>\r\n<Tab title=\"Linux\">\r\n\r\n```sh\r\nmake launch\r\n```\r\n\r\n</Tab>\r\n</Tabs>\r\n\r\n" +
	"```mermaid\r\ngraph TD; A-->B\r\n```\r\n\r\n| a | b |\r\n|---|---|\r\n| ✓ | ✗ |"

func cliIn(dir string) (*cli.CLI, *bytes.Buffer, *bytes.Buffer) {
	env := apptest.Env(dir)
	var stdout, stderr bytes.Buffer
	return &cli.CLI{Local: Local{}, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}, &stdout, &stderr
}

// chopin import then chopin export gives the file back byte for byte,
// through the running Chopin, and the import took the file's heading as the
// title.
func TestExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	src := filepath.Join(t.TempDir(), "launch.md")
	os.WriteFile(src, []byte(planFixture), 0o600)

	cli, stdout, stderr := cliIn(dir)
	if code := cli.Run(context.Background(), []string{"import", src, "--repository", "acme/rocket"}); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	wantURL := ta.URL() + "/documents/acme/rocket/launch-plan"
	if got := stdout.String(); !strings.Contains(got, `as "Launch plan 🚀": `+wantURL) {
		t.Fatalf("import printed %q, want the title and %s", got, wantURL)
	}

	out := filepath.Join(t.TempDir(), "out.md")
	for _, doc := range []string{wantURL, "acme/rocket/launch-plan"} {
		stdout.Reset()
		os.Remove(out)
		if code := cli.Run(context.Background(), []string{"export", doc, "-o", out}); code != 0 {
			t.Fatalf("export %s: exit %d\n%s%s", doc, code, stdout, stderr)
		}
		if got, _ := os.ReadFile(out); string(got) != planFixture {
			t.Errorf("export %s -o: %q\nwant %q", doc, got, planFixture)
		}
	}
	stdout.Reset()
	if code := cli.Run(context.Background(), []string{"export", "acme/rocket/launch-plan"}); code != 0 || stdout.String() != planFixture {
		t.Errorf("export to standard output: exit %d, %q", code, stdout)
	}
	// The browser's Download .md is the same bytes.
	r := ta.Do("GET", "/api/channels/"+docID(t, ta, "launch-plan")+"/plan.md", nil)
	if r.Status != 200 || string(r.Body) != planFixture || r.Header.Get("Content-Disposition") != `attachment; filename="launch-plan.md"` {
		t.Errorf("plan.md: %d %q %q", r.Status, r.Header.Get("Content-Disposition"), r.Body)
	}

	// A second import of the exported file makes a second document with the
	// same bytes.
	stdout.Reset()
	if code := cli.Run(context.Background(), []string{"import", out, "--repository", "acme/rocket", "--title", "Copy"}); code != 0 {
		t.Fatalf("import again: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout.Reset()
	if code := cli.Run(context.Background(), []string{"export", "acme/rocket/copy"}); code != 0 || stdout.String() != planFixture {
		t.Errorf("export of the copy: exit %d, %q", code, stdout)
	}
}

func docID(t *testing.T, ta *testApp, slug string) string {
	t.Helper()
	var ch channelJSON
	ta.Do("GET", "/api/repositories/acme/rocket/documents/"+slug, nil).JSON(t, &ch)
	return ch.ID
}

// A file that cannot become a plan is refused with every problem at its
// line, and no document is made.
func TestImportMalformedNamesTheLine(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	src := filepath.Join(t.TempDir(), "bad.md")
	os.WriteFile(src, []byte("# Bad\n\nfine\nnot \xff UTF-8\n\n<Decision id=\"d1\" />\nnul \x00 here\n"), 0o600)

	cli, stdout, stderr := cliIn(dir)
	code := cli.Run(context.Background(), []string{"import", src, "--repository", "acme/rocket"})
	want := "chopin import: " + src + ": The file cannot become a plan; 3 problems:\n" +
		"line 4: is not UTF-8 text (byte 0xFF at column 5); save the file as UTF-8\n" +
		"line 6: <Decision id=\"d1\" /> is the mark of a decision card that this Chopin does not hold (its document was deleted, or the file comes from another computer); delete the line, or write the question and its answer in its place\n" +
		"line 7: holds the control character U+0000 (NUL) at column 5; a plan is text, with tab the only control character in a line\n"
	if code != 1 || stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("exit %d\nstderr:\n%s\nwant:\n%s", code, stderr, want)
	}
	var list struct{ Channels []channelJSON }
	ta.Do("GET", "/api/repositories/acme/rocket/channels", nil).JSON(t, &list)
	if len(list.Channels) != 0 {
		t.Errorf("a refused import left documents: %+v", list.Channels)
	}
}

// Without a running Chopin, export and import start one inside themselves
// for the moment they need it, and leave nothing running.
func TestExportImportWhenNotRunning(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	ta.Stop()

	src := filepath.Join(t.TempDir(), "launch.md")
	os.WriteFile(src, []byte(planFixture), 0o600)
	cli, stdout, stderr := cliIn(dir)
	if code := cli.Run(context.Background(), []string{"import", src, "--repository", "acme/rocket", "--title", "Offline"}); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout.Reset()
	if code := cli.Run(context.Background(), []string{"export", "acme/rocket/offline"}); code != 0 || stdout.String() != planFixture {
		t.Fatalf("export: exit %d, %q %s", code, stdout, stderr)
	}
	if _, err := instance.Find(filepath.Join(dir, "data")); err != instance.ErrNotRunning {
		t.Errorf("after the commands: %v, want Chopin not running", err)
	}
}

// Save to checkout writes docs/plans/<slug>.md, and never replaces a file
// changed on disk since the last save (or not written by Chopin) unless
// asked to.
func TestSaveToCheckoutRefusesToClobber(t *testing.T) {
	ta := startApp(t)
	checkout := gitCheckout(t, "")
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "acme/rocket", "path": checkout}), 201, "")
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "acme/nopath"}), 201, "")
	doc := ta.CreateDocument("acme/rocket", "Launch plan")
	file := filepath.Join(checkout, "docs", "plans", "launch-plan.md")
	edit := func(text string) {
		t.Helper()
		var plan struct{ Revision int64 }
		ta.Do("GET", "/api/channels/"+doc.ID+"/plan", nil).JSON(t, &plan)
		apptest.Want(t, ta.Do("PUT", "/api/channels/"+doc.ID+"/plan", map[string]any{"revision": plan.Revision, "source": text}), 200, "")
	}
	save := func(overwrite bool) apptest.Response {
		t.Helper()
		return ta.Do("POST", "/api/channels/"+doc.ID+"/plan/save", map[string]bool{"overwrite": overwrite})
	}
	onDisk := func() string { b, _ := os.ReadFile(file); return string(b) }

	edit("# Launch plan\n\nfirst\n")
	r := save(false)
	apptest.Want(t, r, 200, "")
	if onDisk() != "# Launch plan\n\nfirst\n" || !strings.Contains(string(r.Body), `"path":"docs/plans/launch-plan.md"`) {
		t.Fatalf("first save: %s; on disk %q", r.Body, onDisk())
	}
	// Unchanged on disk since: saving again replaces it.
	edit("# Launch plan\n\nsecond\n")
	apptest.Want(t, save(false), 200, "")
	if onDisk() != "# Launch plan\n\nsecond\n" {
		t.Fatalf("second save: on disk %q", onDisk())
	}
	// Changed on disk: refused, and the file is left as the person wrote it.
	os.WriteFile(file, []byte("my own notes\n"), 0o644)
	edit("# Launch plan\n\nthird\n")
	r = save(false)
	apptest.Want(t, r, 409, "file-changed")
	if !strings.Contains(string(r.Body), "docs/plans/launch-plan.md was changed on disk since Chopin last saved it") || onDisk() != "my own notes\n" {
		t.Fatalf("save over a changed file: %s; on disk %q", r.Body, onDisk())
	}
	// Asked to: replaced.
	apptest.Want(t, save(true), 200, "")
	if onDisk() != "# Launch plan\n\nthird\n" {
		t.Fatalf("overwrite: on disk %q", onDisk())
	}

	// A file Chopin never wrote is not replaced either.
	other := ta.CreateDocument("acme/rocket", "Other")
	os.WriteFile(filepath.Join(checkout, "docs", "plans", "other.md"), []byte("theirs\n"), 0o644)
	r = ta.Do("POST", "/api/channels/"+other.ID+"/plan/save", nil)
	apptest.Want(t, r, 409, "file-changed")
	if !strings.Contains(string(r.Body), "already exists and was not written by Chopin") {
		t.Errorf("save over a file Chopin did not write: %s", r.Body)
	}
	// A repository without a checkout says so.
	nopath := ta.CreateDocument("acme/nopath", "Nowhere")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+nopath.ID+"/plan/save", nil), 409, "no-checkout")
}
