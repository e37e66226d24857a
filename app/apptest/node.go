package apptest

// Tests that run code from ui/ with Node (the browser test, the UI's unit
// tests, the MCP and ACP clients nobody here wrote) find their tools here,
// and are skipped where the tools are missing, except under CI.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Missing skips the test because something it needs is not installed, or
// fails it under CI (CI set): .ci/run installs everything, so there a skip
// would hide the code untested.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// NodeTool returns the web UI's folder (../ui, seen from the package
// running the test) and the path of program (node or npm), when ui's
// node_modules holds the npm package pkg the test needs; otherwise it calls
// Missing.
func NodeTool(t testing.TB, program, pkg string) (ui, path string) {
	t.Helper()
	ui, err := filepath.Abs("../ui")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ui, "node_modules", filepath.FromSlash(pkg))); err != nil {
		Missing(t, "ui/node_modules has no %s (run `npm ci` in ui/); .ci/run does", pkg)
	}
	path, err = exec.LookPath(program)
	if err != nil {
		Missing(t, "no %s on PATH", program)
	}
	return ui, path
}
