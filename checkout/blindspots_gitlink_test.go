package checkout_test

// A symbolic link inside the checkout that leads into a .git folder below
// the top (a nested repository's, or one named .GIT) is refused as .git
// itself is: every part of the resolved path is checked, not only its
// first.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLinkIntoANestedGitFolder(t *testing.T) {
	root := edgeFixture(t)
	for link, target := range map[string]string{"gitlink": "nested/.git", "upperlink": "sub/.GIT"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	withAndWithoutGit(t, root, func(t *testing.T, root string) {
		c := open(t, root)
		for _, tc := range []struct {
			tool  string
			input map[string]any
		}{
			{"read_file", map[string]any{"path": "gitlink/description"}},
			{"read_file", map[string]any{"path": "upperlink/config"}},
			{"list_files", map[string]any{"path": "gitlink"}},
			{"list_files", map[string]any{"path": "upperlink"}},
			{"search_code", map[string]any{"pattern": "needle", "path": "gitlink"}},
			{"search_code", map[string]any{"pattern": "needle", "path": "upperlink/config"}},
		} {
			out, err := call(t, c, tc.tool, tc.input)
			if err == nil || !strings.Contains(err.Error(), "leads into .git") {
				t.Errorf("%s %v: got %q, %v; want a refusal saying it leads into .git", tc.tool, tc.input, out, err)
			}
			if strings.Contains(out, "upper-case") || strings.Contains(out, "nested repository") {
				t.Errorf("%s %v read a .git folder: %q", tc.tool, tc.input, out)
			}
		}
	})
}
