package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/store/storetest"
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

	steps := nodeScript{args: []string{"tests/storagebanner.mjs", ta.app.NewLaunchURL(), apptest.MustURL(doc.URL).Path},
		timeout: 3 * time.Minute, step: subtestStep(t),
		answer: func(m scriptLine) (any, error) {
			if m.Ask != "damage" {
				return nil, fmt.Errorf("no such question: %s", m.Ask)
			}
			storetest.Scribble(t, filepath.Join(cfg.DataDir, "chopin.db"), "images")
			ta.app.checkIntegrity(context.Background())
			d := ta.app.store.Damage()
			if d == nil {
				return nil, errors.New("the check found no damage")
			}
			return map[string]string{"message": d.Message}, nil
		}}.run(t, ui, node)
	if steps != 4 {
		t.Errorf("storagebanner.mjs ran %d steps, want 4", steps)
	}
}
