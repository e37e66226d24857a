package app

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph enforces the layout: main -> app -> {store, room,
// plannerhost, agentconn, assets}. store, room and agentconn never import
// each other, app, echo or melody; they say what they need in interfaces of
// their own. plannerhost, the server's side of a turn, implements
// agentconn's Host and room's Planner, so it imports those two, but never
// app, store or a SQL driver. app/apptest, the end-to-end tests' harness,
// talks to the app only as a client does.
func TestImportGraph(t *testing.T) {
	const module = "github.com/chopin-desktop/chopin"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := map[string][]string{
		"store":            {"app", "room", "plannerhost", "agentconn", "assets", "github.com/labstack/echo", "github.com/olahol/melody"},
		"room":             {"app", "store", "plannerhost", "agentconn", "assets", "github.com/labstack/echo", "github.com/olahol/melody", "database/sql", "modernc.org/sqlite"},
		"plannerhost":      {"app", "store", "assets", "github.com/labstack/echo", "github.com/olahol/melody", "database/sql", "modernc.org/sqlite"},
		"agentconn":        {"app", "store", "room", "plannerhost", "assets", "github.com/labstack/echo", "github.com/olahol/melody", "database/sql", "modernc.org/sqlite"},
		"agentconn/client": {"app", "store", "room", "plannerhost", "assets", "github.com/labstack/echo", "github.com/olahol/melody"},
		"assets":           {"app", "store", "room", "plannerhost", "agentconn"},
		"planner":          {"app", "store", "room", "plannerhost", "assets", "agentconn", "github.com/labstack/echo", "github.com/olahol/melody"},
		"app/apptest":      {"app", "store", "room", "plannerhost", "agentconn", "assets", "planner", "github.com/labstack/echo", "github.com/olahol/melody", "database/sql", "modernc.org/sqlite"},
		"":                 {"store", "room", "plannerhost", "agentconn", "assets"}, // main reaches them only through app
	}
	// allowed are imports a package may have although a rule above forbids
	// a package they are in: the bundled Planner is an agent client like
	// any other, so of agentconn it imports only the client.
	allowed := map[string][]string{
		"planner": {"agentconn/client"},
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		switch path.Base(pkg) {
		case "util", "utils", "common", "types", "models", "helpers":
			t.Errorf("package %s: name a package for what it is", fields[0])
		}
		rules, ok := forbidden[pkg]
		if !ok {
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			own := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if slices.Contains(allowed[pkg], own) {
				continue
			}
			for _, f := range rules {
				if own == f || strings.HasPrefix(own, f+"/") || imp == f || strings.HasPrefix(imp, f+"/") {
					t.Errorf("%s imports %s, which the layout forbids", fields[0], imp)
				}
			}
		}
	}
	if seen < 6 {
		t.Errorf("found only %d of the layout's packages; is the module path %s?", seen, module)
	}
}
