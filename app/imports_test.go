package app

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph enforces the layout: main -> app -> {store, room,
// agentconn, assets}. store, room and agentconn never import each other, app,
// echo or melody; they say what they need in interfaces of their own. The
// protocol's wire package imports nothing of the module; the client shares
// only it with the server, and the bundled Planner is a client like any
// other.
func TestImportGraph(t *testing.T) {
	const module = "github.com/chopin-desktop/chopin"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := map[string][]string{
		"store":            {"app", "room", "agentconn", "assets", "github.com/labstack/echo", "github.com/olahol/melody"},
		"room":             {"app", "store", "agentconn", "assets", "github.com/labstack/echo", "github.com/olahol/melody", "database/sql", "modernc.org/sqlite"},
		"agentconn":        {"app", "store", "room", "assets", "github.com/labstack/echo", "github.com/olahol/melody", "database/sql", "modernc.org/sqlite"},
		"agentconn/client": {"app", "store", "room", "assets", "github.com/labstack/echo", "github.com/olahol/melody"},
		"agentconn/wire":   {"github.com/gorilla/websocket", "github.com/labstack/echo", "github.com/olahol/melody"},
		"assets":           {"app", "store", "room", "agentconn"},
		"planner":          {"app", "store", "room", "assets", "agentconn", "github.com/labstack/echo", "github.com/olahol/melody"},
		"":                 {"store", "room", "agentconn", "assets"}, // main reaches them only through app
	}
	// allowed are imports a package may have although a rule above forbids
	// a package they are in: the bundled Planner is an agent client like
	// any other, so of agentconn it imports only the client and the wire;
	// the room shares the question call with the wire, and nothing else of
	// agentconn.
	allowed := map[string][]string{
		"planner": {"agentconn/client", "agentconn/wire"},
		"room":    {"agentconn/wire"},
	}
	// ownOnly lists, for a package, every package of the module it may
	// import; any other is refused, including one added after this rule.
	// The wire imports nothing of the module, the client only the wire (it
	// must not import the server), and the bundled Planner only the
	// client and the wire.
	ownOnly := map[string][]string{
		"agentconn/wire":   {},
		"agentconn/client": {"agentconn/wire"},
		"planner":          {"agentconn/client", "agentconn/wire"},
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		switch path.Base(pkg) {
		case "util", "utils", "common", "types", "models", "helpers":
			t.Errorf("package %s: name a package for what it is", fields[0])
		}
		if only, ok := ownOnly[pkg]; ok {
			for _, imp := range fields[1:] {
				own, mine := strings.CutPrefix(imp, module+"/")
				if mine && !slices.Contains(only, own) {
					t.Errorf("%s imports %s; of this module it may import only %v", fields[0], imp, only)
				}
			}
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
	if seen < 4 {
		t.Errorf("found only %d of the layout's packages; is the module path %s?", seen, module)
	}
}
