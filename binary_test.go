package main

// The binary a person runs: a `go run` build is temporary, so nothing may
// point at it.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDesktopEntryRefusesGoRunBuild: the real binary, copied where `go run`
// puts its build, refuses to add itself to the application menu and says
// how to build one that stays; the same binary elsewhere adds itself.
func TestDesktopEntryRefusesGoRunBuild(t *testing.T) {
	h := newHome(t)
	data, err := os.ReadFile(chopinBin)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "go-build2946", "b001", "exe", "chopin")
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	xdgData := filepath.Join(t.TempDir(), "share")
	env := append(append([]string{}, h.env...), "XDG_DATA_HOME="+xdgData)
	out, errOut, code := runBinary(t, tmp, env, "desktop-entry")
	if code == 0 || !strings.Contains(errOut, "a temporary build that `go run` deletes") || !strings.Contains(errOut, "go build -o chopin .") {
		t.Errorf("desktop-entry from a go run build: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(xdgData, "applications", "chopin.desktop")); err == nil {
		t.Error("the entry was written anyway")
	}
	if out, errOut, code := runBinary(t, chopinBin, env, "desktop-entry"); code != 0 {
		t.Errorf("desktop-entry from a built chopin: exit %d\n%s%s", code, out, errOut)
	}
}

// runBinary runs the chopin at bin to its end.
func runBinary(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}
