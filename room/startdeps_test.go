package room

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoStartUpCostFromGoldmarkExtensions: goldmark's extension package
// compiles its regular expressions when the program starts (about 1 ms of
// every start, GODEBUG=inittrace=1), and an outline needs only its table
// transformer, which table.go holds. The room package must not link it.
func TestNoStartUpCostFromGoldmarkExtensions(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/yuin/goldmark/extension" {
			t.Fatalf("package room links %s, whose initialisation runs at every start; use the table transformer in table.go", p)
		}
	}
}
