package app

// The web UI's own unit tests (ui/tests/*.test.ts: the room reducer against
// the frames of docs/room-protocol.md), run by `go test ./...` as `npm test`
// in ui/. They need only Node and ui/node_modules, not a browser.

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

func TestUIUnitTests(t *testing.T) {
	ui, npm := apptest.NodeTool(t, "npm", "esbuild")
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
