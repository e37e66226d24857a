package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// Save to checkout follows the checkout's own links as the checkout tools
// do: a docs folder that is a link into .git (the checkout's, or a nested
// repository's, in any letter case) or out of the checkout is refused, and
// no folder is created outside before the refusal.
func TestSaveToCheckoutConfinedThroughLinks(t *testing.T) {
	outside := t.TempDir()
	for name, link := range map[string]func(checkout string) string{
		"into .git":               func(c string) string { return filepath.Join(c, ".git") },
		"into a nested .GIT":      func(c string) string { return mkdir(t, filepath.Join(c, "vendor", "lib", ".GIT")) },
		"out of the checkout":     func(string) string { return outside },
		"into a nested .git/refs": func(c string) string { return mkdir(t, filepath.Join(c, "sub", ".git", "refs")) },
	} {
		t.Run(name, func(t *testing.T) {
			ta := startApp(t)
			checkout := gitCheckout(t, "")
			target := link(checkout)
			if err := os.Symlink(target, filepath.Join(checkout, "docs")); err != nil {
				t.Fatal(err)
			}
			apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "acme/rocket", "path": checkout}), 201, "")
			doc := ta.CreateDocument("acme/rocket", "Launch plan")
			r := ta.Do("POST", "/api/channels/"+doc.ID+"/plan/save", nil)
			apptest.Want(t, r, 409, "invalid-plan-path")
			if !strings.Contains(string(r.Body), "Change PLAN_FILE") {
				t.Errorf("refusal: %s", r.Body)
			}
			if _, err := os.Lstat(filepath.Join(target, "plans")); err == nil {
				t.Errorf("a folder was created at %s before the refusal", filepath.Join(target, "plans"))
			}
		})
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
