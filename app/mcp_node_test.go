package app

// The MCP tools through a client nobody here wrote: ui/tests/mcp.mjs runs
// the official TypeScript SDK against the real app, over Streamable HTTP
// and over `chopin mcp` (the binary built from this tree), and reports
// each step, which becomes a subtest here.

import (
	"os"
	"os/exec"
	"path/filepath"
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

	env := os.Environ()
	for k, v := range apptest.Env(dir) {
		env = append(env, k+"="+v)
	}
	steps := nodeScript{args: []string{"tests/mcp.mjs", ta.URL() + "/mcp", ta.Token(), "acme/rocket", bin}, env: env,
		timeout: 2 * time.Minute, step: subtestStep(t)}.run(t, ui, node)
	if steps != 16 {
		t.Errorf("mcp.mjs ran %d steps, want 16", steps)
	}
}
