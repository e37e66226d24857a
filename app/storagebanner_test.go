package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// TestBrowserStorageBanner: a damaged database shows its banner in a real
// Chromium, in the document's open tab at once and on a page loaded after,
// on a wide and a narrow window, light and dark (ui/tests/storagebanner.mjs,
// which asks this test to damage the database and run the check).
func TestBrowserStorageBanner(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		apptest.Missing(t, "no Chromium at %s (apt-get install chromium); .ci/run installs it", chromiumPath)
	}
	ui, node := apptest.NodeTool(t, "node", "playwright-core")

	cfg := testConfig(t, t.TempDir())
	first := startAppWith(t, cfg)
	first.AddRepository("octo/plans")
	doc := first.CreateDocument("octo/plans", "Launch")
	first.Stop() // stopped cleanly: the database file holds every page
	ta := startAppChecking(t, cfg, time.Hour, 24*time.Hour)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "tests/storagebanner.mjs", ta.app.NewLaunchURL(), apptest.MustURL(doc.URL).Path)
	cmd.Dir = ui
	cmd.Stderr = &testLogWriter{t: t, prefix: "storagebanner.mjs: "}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	steps := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "@@ ")
		if !ok {
			t.Log(sc.Text())
			continue
		}
		var m struct {
			Step, Error, Ask string
			OK               bool
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("storagebanner.mjs said %q: %v", line, err)
		}
		if m.Step != "" {
			steps++
			t.Run(m.Step, func(t *testing.T) {
				if !m.OK {
					t.Error(m.Error)
				}
			})
			continue
		}
		reply := map[string]string{}
		if m.Ask == "damage" {
			scribbleTable(t, filepath.Join(cfg.DataDir, "chopin.db"), "images")
			ta.app.checkIntegrity(context.Background())
			if d := ta.app.store.Damage(); d != nil {
				reply["message"] = d.Message
			} else {
				reply["error"] = "the check found no damage"
			}
		} else {
			reply["error"] = "no such question: " + m.Ask
		}
		raw, _ := json.Marshal(reply)
		fmt.Fprintf(stdin, "%s\n", raw)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("storagebanner.mjs: %v", err)
	}
	if steps != 4 {
		t.Errorf("storagebanner.mjs ran %d steps, want 4", steps)
	}
}
