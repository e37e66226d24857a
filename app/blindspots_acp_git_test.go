package app

// The bridge's reads and .git below the top of the checkout: a folder named
// .GIT (on a case-insensitive disk, the real .git), a nested repository's
// .git, and a link into either are refused as .git itself is.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestACPReadsNoGitFolderBelowTheTop(t *testing.T) {
	ta := startApp(t)
	dir := gitCheckout(t, "")
	for path, content := range map[string]string{
		"sub/.GIT/config":         "[core]\n\tneedle = upper-case git folder\n",
		"nested/.git/description": "the nested repository's git folder\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"gitlink": "nested/.git", "upperlink": "sub/.GIT"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if r := ta.Do("POST", "/api/repositories", map[string]any{"name": "octo/plans", "path": dir}); r.Status != http.StatusCreated {
		t.Fatalf("add repository: %d %s", r.Status, r.Body)
	}
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	cli := ta.runEdgeACPPlanner(t, ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)
	for i, path := range []string{"sub/.GIT/config", "sub/.Git/config", "nested/.git/description", "gitlink/description", "upperlink/config"} {
		r := reply(browser, fmt.Sprint("m", i), "@chopin size "+path)
		if got := fmt.Sprint(r["text"]); !strings.HasPrefix(got, "refused: ") || strings.Contains(got, "git folder") {
			t.Errorf("%s: %q, want a refusal", path, got)
		}
	}
	cli.stop(t)
}
