package app

// chopin repo add: each kind of origin remote names the repository, a
// checkout without one asks for --name, and it works with Chopin running
// (over HTTP) and without (in the database).

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
)

func runRepoAdd(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cli := &cli.CLI{Local: Local{}, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	code := cli.Run(context.Background(), append([]string{"repo", "add"}, args...))
	return code, stdout.String(), stderr.String()
}

func TestRepoAddRunning(t *testing.T) {
	ta := startApp(t)
	env := ta.plannerEnv(nil)
	for remote, name := range map[string]string{
		"https://github.com/octo/engine.git":        "octo/engine",
		"ssh://git@gitlab.example.com:2222/ada/web": "ada/web",
		"git@github.com:octo/api.git":               "octo/api",
	} {
		dir := gitCheckout(t, remote)
		code, out, errs := runRepoAdd(t, env, dir)
		if code != 0 || out != "Registered "+name+", with its local checkout at "+dir+".\n" || errs != "" {
			t.Errorf("%s: exit %d, %q, %q", remote, code, out, errs)
		}
		var got repositoryJSON
		ta.Do("GET", "/api/repositories/"+name, nil).JSON(t, &got)
		if got.Path != dir || got.Checkout == nil || got.Checkout.Branch != "main" {
			t.Errorf("%s registered as %+v", remote, got)
		}
	}

	// No remote: a clear message asking for --name; with it, registered.
	bare := gitCheckout(t, "")
	code, out, errs := runRepoAdd(t, env, bare)
	if code != 2 || out != "" || errs != "chopin repo add: the checkout "+bare+" has no origin remote. Name its repository with --name owner/name.\n" {
		t.Errorf("no remote: exit %d, %q, %q", code, out, errs)
	}
	if code, out, _ := runRepoAdd(t, env, bare, "--name", "ada/local"); code != 0 || !strings.HasPrefix(out, "Registered ada/local") {
		t.Errorf("--name: exit %d, %q", code, out)
	}
	// A name registered already gets the checkout.
	ta.AddRepository("octo/later")
	later := gitCheckout(t, "https://github.com/octo/later")
	if code, out, _ := runRepoAdd(t, env, "--name", "octo/later", later); code != 0 || out != "octo/later was registered already; its local checkout is now "+later+".\n" {
		t.Errorf("registered already: exit %d, %q", code, out)
	}
	// The same checkout twice, and a folder that is no work tree, are refused.
	if code, _, errs := runRepoAdd(t, env, "--name", "ada/twice", bare); code != 1 || !strings.Contains(errs, "is already the checkout of ada/local") {
		t.Errorf("the same checkout twice: exit %d, %q", code, errs)
	}
	if code, _, errs := runRepoAdd(t, env, t.TempDir()); code != 1 || !strings.Contains(errs, "is not a Git work tree") {
		t.Errorf("a plain folder: exit %d, %q", code, errs)
	}
}

func TestRepoAddNotRunning(t *testing.T) {
	env := apptest.Env(t.TempDir())
	dir := gitCheckout(t, "git@github.com:octo/engine.git")
	if code, out, errs := runRepoAdd(t, env, dir); code != 0 || out != "Registered octo/engine, with its local checkout at "+dir+".\n" {
		t.Fatalf("exit %d, %q, %q", code, out, errs)
	}
	if code, out, _ := runRepoAdd(t, env, dir); code != 0 || !strings.HasPrefix(out, "octo/engine was registered already") {
		t.Fatalf("again: exit %d, %q", code, out)
	}
}
