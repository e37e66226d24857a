package checkout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dir resolves the folder a person names as a repository's checkout, in a
// form or on the command line: ~ is the home folder, a relative path is
// taken from the working directory. It returns the folder absolute and
// clean once Inspect finds it the top of a Git work tree.
func Dir(ctx context.Context, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("the path %s cannot be resolved", p)
	}
	if _, err := Inspect(ctx, abs); err != nil {
		return "", err
	}
	return abs, nil
}
