package checkout_test

// The checkout's tools on a real Git repository the test makes: commits on
// two branches, an ignored file, a symbolic link out of the checkout, a
// file with a token, a binary file and a 4 MB file.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/checkout"
)

const fakeToken = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

// gitIn runs git in dir for the test, failing it on an error.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bigLines is the 4 MB file's content: numbered lines of varied length.
func bigLines() string {
	var b strings.Builder
	for i := 1; b.Len() < 4<<20; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%97))
	}
	return b.String()
}

// fixture makes the repository and returns its folder and the folder
// outside it the symbolic link points to.
func fixture(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "repo"), filepath.Join(base, "outside")
	write(t, outside, "secret.txt", "outside secret needle\n")
	gitIn(t, base, "init", "-q", "-b", "main", root)
	write(t, root, "README.md", "# Engine\n\nThe engine turns needles into plans.\n")
	write(t, root, "src/engine.go", "package engine\n\n// Run starts the engine.\nfunc Run() error { return nil }\n")
	write(t, root, ".gitignore", "*.log\nbuild/\n")
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-q", "-m", "First commit")
	write(t, root, "src/engine.go", "package engine\n\n// Run starts the engine, with a needle.\nfunc Run() error { return nil }\n")
	write(t, root, ".env", "GITHUB_TOKEN="+fakeToken+"\n")
	write(t, root, "big.txt", bigLines())
	write(t, root, "logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-q", "-m", "Second commit: a needle in Run")
	gitIn(t, root, "branch", "feature")
	write(t, root, "debug.log", "ignored needle\n")
	write(t, root, "build/out.txt", "ignored needle\n")
	write(t, root, "notes/untracked.md", "an untracked needle\n")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "leakdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README.md", filepath.Join(root, "readme-link.md")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func open(t *testing.T, root string) *checkout.Checkout {
	t.Helper()
	c, err := checkout.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func call(t *testing.T, c *checkout.Checkout, tool string, input any) (string, error) {
	t.Helper()
	raw, _ := json.Marshal(input)
	return c.Call(context.Background(), tool, string(raw))
}

func mustCall(t *testing.T, c *checkout.Checkout, tool string, input any) string {
	t.Helper()
	out, err := call(t, c, tool, input)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, input, err)
	}
	return out
}

func TestListFiles(t *testing.T) {
	root, _ := fixture(t)
	c := open(t, root)
	if !c.HasGit() {
		t.Fatal("the fixture is a Git work tree, but HasGit is false")
	}
	out := mustCall(t, c, "list_files", map[string]any{})
	want := []string{".env", ".gitignore", "README.md", "big.txt", "leak.txt", "leakdir", "logo.png", "notes/untracked.md", "readme-link.md", "src/engine.go"}
	if got := strings.Split(out, "\n")[1:]; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("list_files listed\n%s\nwant the tracked and untracked files, not the ignored ones or .git:\n%s", out, strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(out, "files: 1 to 10 of 10 in the checkout\n") {
		t.Fatalf("header: %q", out)
	}
	if out := mustCall(t, c, "list_files", map[string]any{"glob": "*.go"}); out != "files: 1 to 1 of 1 in the checkout matching *.go\nsrc/engine.go" {
		t.Fatalf("glob: %q", out)
	}
	if out := mustCall(t, c, "list_files", map[string]any{"path": "src"}); !strings.HasSuffix(out, "\nsrc/engine.go") {
		t.Fatalf("path: %q", out)
	}
}

func TestListFilesPages(t *testing.T) {
	root := t.TempDir()
	gitIn(t, root, "init", "-q")
	for i := range 2500 {
		write(t, root, fmt.Sprintf("d/f%04d.txt", i), "x\n")
	}
	c := open(t, root)
	next := map[string]any{}
	var seen []string
	for page := 0; ; page++ {
		out := mustCall(t, c, "list_files", next)
		lines := strings.Split(out, "\n")
		m := regexp.MustCompile(`(?m)^next: list_files (.*)$`).FindStringSubmatch(out)
		files := lines[1:]
		if m != nil {
			files = lines[2:]
		}
		if len(files) > checkout.ListPage {
			t.Fatalf("page %d has %d files", page, len(files))
		}
		seen = append(seen, files...)
		if m == nil {
			break
		}
		next = map[string]any{}
		if err := json.Unmarshal([]byte(m[1]), &next); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2500 {
		t.Fatalf("paging listed %d files, want 2500", len(seen))
	}
	for i, f := range seen {
		if want := fmt.Sprintf("d/f%04d.txt", i); f != want {
			t.Fatalf("file %d is %s, want %s", i, f, want)
		}
	}
}

func TestReadFile(t *testing.T) {
	root, _ := fixture(t)
	c := open(t, root)
	out := mustCall(t, c, "read_file", map[string]any{"path": "src/engine.go"})
	want := "file: src/engine.go\nsize: 89 bytes\nlines: 1 to 4\n     1\tpackage engine\n     2\t\n     3\t// Run starts the engine, with a needle.\n     4\tfunc Run() error { return nil }"
	if out != want {
		t.Fatalf("read_file:\n%q\nwant\n%q", out, want)
	}
	out = mustCall(t, c, "read_file", map[string]any{"path": "logo.png"})
	if !strings.Contains(out, "logo.png is a binary file of 16 bytes") {
		t.Fatalf("binary: %q", out)
	}
	out = mustCall(t, c, "read_file", map[string]any{"path": "readme-link.md", "offset": 3, "limit": 1})
	if !strings.HasSuffix(out, "     3\tThe engine turns needles into plans.") {
		t.Fatalf("a link inside the checkout is read: %q", out)
	}
	out = mustCall(t, c, "read_file", map[string]any{"path": "README.md", "limit": 1})
	if !strings.Contains(out, `next: read_file {"path":"README.md","offset":2,"limit":1}`) {
		t.Fatalf("limit: %q", out)
	}
	// A named pipe is refused, not opened (which would wait for a writer).
	if err := exec.Command("mkfifo", filepath.Join(root, "pipe")).Run(); err == nil {
		if _, err := call(t, c, "read_file", map[string]any{"path": "pipe"}); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Fatalf("a named pipe: %v", err)
		}
	}
}

// TestReadFilePaging pages through the 4 MB file with each next: line and
// gets every line exactly once, every result within the budget.
func TestReadFilePaging(t *testing.T) {
	root, _ := fixture(t)
	c := open(t, root)
	want := strings.Split(strings.TrimSuffix(bigLines(), "\n"), "\n")
	nextRE := regexp.MustCompile(`(?m)^next: read_file (.*)$`)
	lineRE := regexp.MustCompile(`^ *(\d+)\t(.*)$`)
	input := map[string]any{"path": "big.txt"}
	got := 0
	for calls := 0; ; calls++ {
		out := mustCall(t, c, "read_file", input)
		if len(out) > checkout.MaxResultBytes {
			t.Fatalf("a result of %d bytes, over %d", len(out), checkout.MaxResultBytes)
		}
		lines := strings.Split(out, "\n")
		if len(lines) < 4 || !strings.HasPrefix(lines[0], "file: big.txt") {
			t.Fatalf("result: %.300q", out)
		}
		header := ""
		for _, l := range lines {
			m := lineRE.FindStringSubmatch(l)
			if m == nil {
				header += l + "\n"
				continue
			}
			n, _ := strconv.Atoi(m[1])
			if n != got+1 || m[2] != want[n-1] {
				t.Fatalf("call %d gave line %d %q, want line %d %q", calls, n, m[2], got+1, want[got])
			}
			got = n
		}
		m := nextRE.FindStringSubmatch(header)
		if m == nil {
			break
		}
		input = map[string]any{}
		if err := json.Unmarshal([]byte(m[1]), &input); err != nil {
			t.Fatal(err)
		}
	}
	if got != len(want) {
		t.Fatalf("paging returned %d lines, want %d", got, len(want))
	}
}

// TestReadFileLongLine continues a line longer than a result by column.
func TestReadFileLongLine(t *testing.T) {
	root := t.TempDir()
	line := strings.Repeat("é0123456789", 5000) // 60,000 bytes, two-byte runes
	write(t, root, "long.txt", "first\n"+line+"\nlast\n")
	c := open(t, root)
	input := map[string]any{"path": "long.txt", "offset": 2}
	var b strings.Builder
	for {
		out := mustCall(t, c, "read_file", input)
		header, body, _ := strings.Cut(out, "\n     2\t")
		text, _, _ := strings.Cut(body, "\n")
		b.WriteString(text)
		m := regexp.MustCompile(`(?m)^next: read_file (.*)$`).FindStringSubmatch(header)
		if m == nil || !strings.Contains(m[1], "column") {
			break
		}
		input = map[string]any{}
		json.Unmarshal([]byte(m[1]), &input)
	}
	if b.String() != line {
		t.Fatalf("the long line came back as %d bytes, want %d, the same", b.Len(), len(line))
	}
}

func TestSearchCode(t *testing.T) {
	root, _ := fixture(t)
	c := open(t, root)
	out := mustCall(t, c, "search_code", map[string]any{"pattern": "NEEDLE"})
	want := "pattern: NEEDLE (text, any case)\nhits: 3\nREADME.md:3: The engine turns needles into plans.\nnotes/untracked.md:1: an untracked needle\nsrc/engine.go:3: // Run starts the engine, with a needle."
	if out != want {
		t.Fatalf("search_code:\n%s\nwant (no ignored files, nothing through the link out):\n%s", out, want)
	}
	out = mustCall(t, c, "search_code", map[string]any{"pattern": "NEEDLE", "caseSensitive": true})
	if !strings.Contains(out, "hits: none") {
		t.Fatalf("case-sensitive: %q", out)
	}
	out = mustCall(t, c, "search_code", map[string]any{"pattern": `func [A-Z]\w+\(`, "regex": true, "path": "src"})
	if !strings.HasSuffix(out, "hits: 1\nsrc/engine.go:4: func Run() error { return nil }") {
		t.Fatalf("regex in path: %q", out)
	}
	out = mustCall(t, c, "search_code", map[string]any{"pattern": "line 1"})
	if !strings.Contains(out, "hits: the first 200; the list was cut") || strings.Count(out, "\nbig.txt:") != checkout.MaxHits {
		t.Fatalf("cut: %.300q", out)
	}
}

func TestHistory(t *testing.T) {
	root, _ := fixture(t)
	c := open(t, root)
	out := mustCall(t, c, "git_log", map[string]any{})
	if !regexp.MustCompile(`^history: HEAD, commits 1 to 2, newest first\n[0-9a-f]{7,} \d{4}-\d\d-\d\d Ada: Second commit: a needle in Run\n[0-9a-f]{7,} \d{4}-\d\d-\d\d Ada: First commit$`).MatchString(out) {
		t.Fatalf("git_log: %q", out)
	}
	out = mustCall(t, c, "git_log", map[string]any{"limit": 1})
	if !strings.Contains(out, `next: git_log {"limit":1,"skip":1}`) {
		t.Fatalf("git_log limit: %q", out)
	}
	out = mustCall(t, c, "git_log", map[string]any{"path": "README.md", "rev": "feature"})
	if !strings.HasSuffix(out, "Ada: First commit") || strings.Contains(out, "Second") {
		t.Fatalf("git_log of a path: %q", out)
	}
	out = mustCall(t, c, "git_show", map[string]any{"rev": "HEAD", "path": "src/engine.go"})
	for _, w := range []string{"Second commit: a needle in Run", "-// Run starts the engine.", "+// Run starts the engine, with a needle."} {
		if !strings.Contains(out, w) {
			t.Fatalf("git_show lacks %q:\n%s", w, out)
		}
	}
	out = mustCall(t, c, "git_show", map[string]any{"rev": "HEAD"})
	if len(out) > checkout.MaxResultBytes || !strings.Contains(out, `next: git_show {"rev":"HEAD","offset":`) {
		t.Fatalf("git_show of a 4 MB diff: %d bytes, %.300q", len(out), out)
	}
	if _, err := call(t, c, "git_show", map[string]any{"rev": "--output=/tmp/x"}); err == nil || !strings.Contains(err.Error(), "is not a revision") {
		t.Fatalf("an option as rev: %v", err)
	}
	if _, err := call(t, c, "git_log", map[string]any{"rev": "nope"}); err == nil || !strings.Contains(err.Error(), `There is no commit named "nope"`) {
		t.Fatalf("an unknown rev: %v", err)
	}
}

// TestEscapes: every way out of the checkout, and into .git, is refused
// by every tool that takes a path, with a sentence that says why.
func TestEscapes(t *testing.T) {
	root, outside := fixture(t)
	c := open(t, root)
	cases := []struct{ path, says string }{
		{"../outside/secret.txt", `goes up with ".."`},
		{"src/../../outside/secret.txt", `goes up with ".."`},
		{"src/..", `goes up with ".."`},
		{filepath.Join(outside, "secret.txt"), "is an absolute path"},
		{filepath.Join(root, "README.md"), "is an absolute path"},
		{"/etc/passwd", "is an absolute path"},
		{`C:\Windows\win.ini`, "is an absolute path"},
		{"leak.txt", "symbolic link that leads outside"},
		{"leakdir/secret.txt", "symbolic link that leads outside"},
		{"leakdir", "symbolic link that leads outside"},
		{".git/config", "inside .git"},
		{".git", "inside .git"},
		{"src/../.git/HEAD", `goes up with ".."`},
		{".GIT/config", "inside .git"},
	}
	tools := []struct {
		name  string
		input func(p string) map[string]any
	}{
		{"read_file", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"list_files", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"search_code", func(p string) map[string]any { return map[string]any{"pattern": "secret", "path": p} }},
		{"git_log", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"git_show", func(p string) map[string]any { return map[string]any{"rev": "HEAD", "path": p} }},
	}
	for _, tc := range cases {
		for _, tool := range tools {
			if strings.HasPrefix(tool.name, "git_") && strings.Contains(tc.says, "symbolic link") {
				continue // the history is Git's own: a path there is never followed on disk
			}
			out, err := call(t, c, tool.name, tool.input(tc.path))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s %q: got %q, %v; want a refusal saying %q", tool.name, tc.path, out, err, tc.says)
			}
			if strings.Contains(out, "outside secret") {
				t.Errorf("%s %q leaked the outside file", tool.name, tc.path)
			}
		}
	}
	// .git is invisible to listing and search alike.
	for tool, input := range map[string]map[string]any{"list_files": {}, "search_code": {"pattern": "repositoryformatversion"}} {
		out := mustCall(t, c, tool, input)
		if strings.Contains(out, ".git/") || strings.Contains(out, "repositoryformatversion =") {
			t.Errorf("%s shows .git: %s", tool, out)
		}
	}
	if _, err := call(t, c, "read_file", map[string]any{"path": "README.md", "extra": 1}); err == nil || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("an unknown field: %v", err)
	}
}

// TestNoGit: without git on PATH the tools walk the folder, honour the
// top-level .gitignore, and offer no history.
func TestNoGit(t *testing.T) {
	root, _ := fixture(t)
	t.Setenv("PATH", t.TempDir())
	c := open(t, root)
	if c.HasGit() || c.GitFound() {
		t.Fatal("git was found on an empty PATH")
	}
	out := mustCall(t, c, "list_files", map[string]any{})
	want := []string{".env", ".gitignore", "README.md", "big.txt", "leak.txt", "leakdir", "logo.png", "notes/untracked.md", "readme-link.md", "src/engine.go"}
	if got := strings.Split(out, "\n")[1:]; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("list_files without Git:\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
	out = mustCall(t, c, "search_code", map[string]any{"pattern": "NEEDLE"})
	if !strings.HasPrefix(out, "pattern: NEEDLE (text, any case)\nhits: 3\n") || strings.Contains(out, "outside") || strings.Contains(out, ".log") {
		t.Fatalf("search_code without Git: %s", out)
	}
	if out := mustCall(t, c, "read_file", map[string]any{"path": "README.md", "limit": 1}); !strings.Contains(out, "# Engine") {
		t.Fatalf("read_file without Git: %s", out)
	}
	if _, err := call(t, c, "git_log", map[string]any{}); err == nil || !strings.Contains(err.Error(), "Git was not found") {
		t.Fatalf("git_log without Git: %v", err)
	}
	if n := len(c.Offered()); n != 3 {
		t.Fatalf("offered %d tools without Git, want 3", n)
	}
}

func TestInspect(t *testing.T) {
	root, _ := fixture(t)
	gitIn(t, root, "remote", "add", "origin", "git@github.com:ada/engine.git")
	info, err := checkout.Inspect(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	head := gitIn(t, root, "rev-parse", "HEAD")
	if info != (checkout.Info{Git: true, Branch: "main", Head: head, Origin: "git@github.com:ada/engine.git"}) {
		t.Fatalf("Inspect: %+v", info)
	}
	if _, err := checkout.Inspect(context.Background(), filepath.Join(root, "src")); err == nil || !strings.Contains(err.Error(), "is inside the Git work tree") {
		t.Fatalf("a subfolder: %v", err)
	}
	if _, err := checkout.Inspect(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a Git work tree") {
		t.Fatalf("a plain folder: %v", err)
	}
	if _, err := checkout.Inspect(context.Background(), filepath.Join(root, "nope")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing folder: %v", err)
	}
}

func TestParseRemote(t *testing.T) {
	for remote, want := range map[string]string{
		"https://github.com/ada/engine.git":            "ada/engine",
		"https://github.com/ada/engine":                "ada/engine",
		"https://user:pw@gitlab.com/ada/engine.git/":   "ada/engine",
		"https://gitlab.com/group/sub/engine.git":      "sub/engine",
		"ssh://git@github.com/ada/engine.git":          "ada/engine",
		"ssh://git@gitlab.example.com:2222/ada/engine": "ada/engine",
		"git@github.com:ada/engine.git":                "ada/engine",
		"github.com:ada/engine":                        "ada/engine",
		"/srv/git/engine.git":                          "",
		"../engine":                                    "",
		"C:/src/engine":                                "",
		"https://github.com/ada":                       "",
	} {
		owner, name, ok := checkout.ParseRemote(remote)
		got := ""
		if ok {
			got = owner + "/" + name
		}
		if got != want {
			t.Errorf("ParseRemote(%q) = %q, want %q", remote, got, want)
		}
	}
}

// TestNestedGit: a nested repository's .git, reached through a symbolic
// link and in any letter case, is refused as the checkout's own is, by the
// tools and by Resolve and OpenFile; OpenFile opens regular files only,
// without waiting on a named pipe.
func TestNestedGit(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.md", "text\n")
	write(t, root, "vendor/lib/.git/config", "[core]\n")
	write(t, root, "vendor/lib/.Git/HEAD", "ref: refs/heads/main\n")
	if err := os.Symlink(filepath.Join(root, "vendor", "lib", ".git"), filepath.Join(root, "libgit")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "vendor", "lib"), filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(root), filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	c := open(t, root)
	for _, p := range []string{"libgit/config", "libgit", "lib/.git/config", "vendor/lib/.Git/HEAD"} {
		if out, err := call(t, c, "read_file", map[string]any{"path": p}); err == nil || !strings.Contains(err.Error(), ".git") {
			t.Errorf("read_file %q: got %q, %v; want a refusal naming .git", p, out, err)
		}
	}
	for p, want := range map[string]error{
		"libgit/config":        checkout.ErrGit,
		"lib/.git/config":      checkout.ErrGit,
		"vendor/lib/.Git/HEAD": checkout.ErrGit,
		"up":                   checkout.ErrOutside,
		"vendor":               checkout.ErrFolder,
		"a.md":                 nil,
	} {
		f, _, err := checkout.OpenFile(root, filepath.Join(root, filepath.FromSlash(p)))
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, want) {
			t.Errorf("OpenFile %q: %v, want %v", p, err, want)
		}
	}
	if _, err := checkout.Resolve(root, "a.md"); err == nil {
		t.Error("Resolve took a relative path")
	}
	if err := exec.Command("mkfifo", filepath.Join(root, "pipe")).Run(); err == nil {
		done := make(chan error, 1)
		go func() {
			_, _, err := checkout.OpenFile(root, filepath.Join(root, "pipe"))
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, checkout.ErrNotFile) {
				t.Errorf("a named pipe: %v, want ErrNotFile", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("OpenFile waited on a named pipe")
		}
	}
}
