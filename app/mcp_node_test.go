package app

// The MCP tools through a client nobody here wrote: ui/tests/mcp.mjs runs
// the official TypeScript SDK against the real app, over Streamable HTTP
// and over `chopin mcp` (the binary built from this tree), and reports
// each step, which becomes a subtest here.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

func TestMCPNodeClient(t *testing.T) {
	ui, node := apptest.NodeTool(t, "node", "@modelcontextprotocol/sdk")

	dir := t.TempDir()
	bin := filepath.Join(dir, "chopin")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("build chopin: %v\n%s", err, out)
	}
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "tests/mcp.mjs", ta.URL()+"/mcp", ta.Token(), "acme/rocket", bin)
	cmd.Dir = ui
	cmd.Env = os.Environ()
	for k, v := range apptest.Env(dir) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = &testLogWriter{t: t, prefix: "mcp.mjs: "}
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
			Step, Error string
			OK          bool
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("mcp.mjs said %q: %v", line, err)
		}
		steps++
		t.Run(m.Step, func(t *testing.T) {
			if !m.OK {
				t.Error(m.Error)
			}
		})
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("mcp.mjs did not finish in time")
	}
	if err != nil {
		t.Errorf("mcp.mjs: %v", err)
	}
	if steps != 16 {
		t.Errorf("mcp.mjs ran %d steps, want 16", steps)
	}
}
