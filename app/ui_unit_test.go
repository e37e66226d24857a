package app

// The web UI's own unit tests (ui/tests/*.test.ts: the room reducer against
// the frames of docs/room-protocol.md), run by `go test ./...` as `npm test`
// in ui/. They need only Node and ui/node_modules, not a browser.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestUIUnitTests(t *testing.T) {
	ui, err := filepath.Abs("../ui")
	if err != nil {
		t.Fatal(err)
	}
	// Skipped where Node or the packages are missing, but never in CI,
	// which installs both.
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	if _, err := os.Stat(filepath.Join(ui, "node_modules", "esbuild")); err != nil {
		skip("ui/node_modules has no esbuild (run `npm ci` in ui/); .ci/run does")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skip("no npm on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "test", "--silent")
	cmd.Dir = ui
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test in ui/: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
}
