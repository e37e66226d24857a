package app

// A repository's local checkout over HTTP: registering one, setting,
// changing and clearing it with PATCH, what the repositories show of it
// (branch, commit, a warning for another origin), and the refusals.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// gitCheckout makes a Git work tree with one commit on main and, unless
// remote is empty, an origin remote.
func gitCheckout(t testing.TB, remote string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "checkout")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
			"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Engine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "First commit")
	if remote != "" {
		run("remote", "add", "origin", remote)
	}
	return dir
}

func TestRepositoryCheckout(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/engine")
	ta.AddRepository("octo/docs")
	dir := gitCheckout(t, "https://github.com/octo/engine.git")

	r := ta.Do("PATCH", "/api/repositories/octo/engine", map[string]string{"path": dir})
	apptest.Want(t, r, 200, "")
	var repo repositoryJSON
	r.JSON(t, &repo)
	if repo.Path != dir || repo.Checkout == nil || repo.Checkout.Branch != "main" || len(repo.Checkout.Head) != 40 ||
		repo.Checkout.Origin != "https://github.com/octo/engine.git" || repo.Checkout.Warning != "" || !repo.Checkout.Git {
		t.Fatalf("PATCH answered %s", r.Body)
	}
	var got repositoryJSON
	ta.Do("GET", "/api/repositories/OCTO/engine", nil).JSON(t, &got)
	if got.Path != dir || got.Checkout == nil || got.Checkout.Head != repo.Checkout.Head {
		t.Fatalf("GET one: %+v", got)
	}

	// The same checkout on a second repository is refused.
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/docs", map[string]string{"path": dir}), 409, "checkout-taken")
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "octo/third", "path": dir + "/"}), 409, "checkout-taken")

	// What is not a work tree's top folder is refused, saying why.
	plain := t.TempDir()
	for path, says := range map[string]string{
		plain:                           "is not a Git work tree",
		filepath.Join(plain, "gone"):    "does not exist",
		filepath.Join(dir, "README.md"): "is a file, not a folder",
	} {
		r := ta.Do("PATCH", "/api/repositories/octo/docs", map[string]string{"path": path})
		apptest.Want(t, r, 400, "invalid-path")
		if !strings.Contains(string(r.Body), says) {
			t.Errorf("PATCH %s: %s, want it to say %q", path, r.Body, says)
		}
	}
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	if r := ta.Do("PATCH", "/api/repositories/octo/docs", map[string]string{"path": filepath.Join(dir, "src")}); !strings.Contains(string(r.Body), "is inside the Git work tree") {
		t.Errorf("a subfolder: %s", r.Body)
	}
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/docs", map[string]any{}), 400, "invalid-body")
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/nope", map[string]string{"path": ""}), 404, "repository-not-found")

	// Another origin is a warning, not a refusal.
	other := gitCheckout(t, "git@github.com:someone/else.git")
	r = ta.Do("PATCH", "/api/repositories/octo/docs", map[string]string{"path": other})
	apptest.Want(t, r, 200, "")
	r.JSON(t, &repo)
	if repo.Checkout == nil || !strings.Contains(repo.Checkout.Warning, "origin remote is someone/else, not octo/docs") {
		t.Fatalf("another origin: %s", r.Body)
	}

	// Clearing frees the path; a folder that went away cannot be set.
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/engine", map[string]string{"path": ""}), 200, "")
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/docs", map[string]string{"path": dir}), 200, "")
	os.RemoveAll(other)
	ta.Do("PATCH", "/api/repositories/octo/engine", map[string]string{"path": other})
	var list struct{ Repositories []repositoryJSON }
	ta.Do("GET", "/api/repositories", nil).JSON(t, &list)
	for _, r := range list.Repositories {
		if r.Name == "octo/docs" && (r.Path != dir || r.Checkout == nil || r.Checkout.Branch != "main") {
			t.Errorf("listed %+v", r)
		}
		if r.Name == "octo/engine" && r.Path != "" {
			t.Errorf("a removed folder was set: %+v", r)
		}
	}
}
