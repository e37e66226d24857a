package checkout_test

// Edges of the confinement and the bounds that the other tests leave
// alone: .git below the top folder in any letter case (a nested
// repository's, and a folder named .GIT, which Git on Linux lists as an
// untracked folder like any other), a symbolic link to the checkout's own
// parent, and read_file's size cap at its exact bound. Each runs with Git
// and, where the tools then walk the folder, without it.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edgeFixture is a small Git work tree with a folder named .GIT below its
// top, a nested repository, and a link "up" to the folder the checkout is
// in, which holds a file of its own.
func edgeFixture(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	gitIn(t, base, "init", "-q", "-b", "main", root)
	write(t, base, "sibling.txt", "a needle beside the checkout\n")
	write(t, root, "README.md", "# Engine\n\nA needle in the readme.\n")
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-q", "-m", "First commit")
	write(t, root, "sub/.GIT/config", "[core]\n\tneedle = upper-case git folder\n")
	gitIn(t, root, "init", "-q", "-b", "main", filepath.Join(root, "nested"))
	write(t, root, "nested/f.txt", "nested work\n")
	write(t, root, "nested/.git/description", "a needle in the nested repository's git folder\n")
	if err := os.Symlink("..", filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	return root
}

// withAndWithoutGit runs f on the checkout at root as Git reads it, and as
// the folder walk reads it (no git on PATH).
func withAndWithoutGit(t *testing.T, root string, f func(t *testing.T, root string)) {
	t.Run("git", func(t *testing.T) {
		if !open(t, root).HasGit() {
			t.Fatal("the fixture is a Git work tree, but HasGit is false")
		}
		f(t, root)
	})
	t.Run("walk", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		if open(t, root).GitFound() {
			t.Fatal("git was found on an empty PATH")
		}
		f(t, root)
	})
}

// hasGitFolder reports whether a listing or search result names a path
// with a .git part in any letter case.
func hasGitFolder(out string) bool {
	for _, line := range strings.Split(strings.ToLower(out), "\n") {
		if strings.HasPrefix(line, ".git/") || strings.Contains(line, "/.git/") {
			return true
		}
	}
	return false
}

func TestDotGitBelowTheTopInAnyCase(t *testing.T) {
	withAndWithoutGit(t, edgeFixture(t), func(t *testing.T, root string) {
		c := open(t, root)
		if out := mustCall(t, c, "list_files", map[string]any{}); hasGitFolder(out) || !strings.Contains(out, "\nREADME.md") {
			t.Errorf("list_files shows a .git folder, or not the readme:\n%s", out)
		}
		out := mustCall(t, c, "search_code", map[string]any{"pattern": "needle"})
		if hasGitFolder(out) || strings.Contains(out, "upper-case") || strings.Contains(out, "nested repository") {
			t.Errorf("search_code searched a .git folder:\n%s", out)
		}
		if !strings.Contains(out, "README.md:3: A needle in the readme.") {
			t.Errorf("search_code missed the readme:\n%s", out)
		}
		for _, p := range []string{"sub/.GIT/config", "sub/.Git/config", "nested/.git/description", "nested/.GIT/description"} {
			for tool, input := range map[string]map[string]any{
				"read_file":   {"path": p},
				"list_files":  {"path": filepath.ToSlash(filepath.Dir(p))},
				"search_code": {"pattern": "needle", "path": filepath.ToSlash(filepath.Dir(p))},
			} {
				out, err := call(t, c, tool, input)
				if err == nil || !strings.Contains(err.Error(), "inside .git") {
					t.Errorf("%s %v: got %q, %v; want a refusal saying it is inside .git", tool, input, out, err)
				}
			}
		}
	})
}

func TestLinkToTheCheckoutsParent(t *testing.T) {
	withAndWithoutGit(t, edgeFixture(t), func(t *testing.T, root string) {
		c := open(t, root)
		for tool, input := range map[string]map[string]any{
			"read_file":          {"path": "up"},
			"list_files":         {"path": "up"},
			"search_code":        {"pattern": "needle", "path": "up"},
			"read_file sibling":  {"path": "up/sibling.txt"},
			"search_code .":      {"pattern": "needle", "path": "up/."},
			"list_files sibling": {"path": "up/"},
		} {
			name, _, _ := strings.Cut(tool, " ")
			out, err := call(t, c, name, input)
			if err == nil || !strings.Contains(err.Error(), "is a symbolic link that leads outside the checkout") {
				t.Errorf("%s %v: got %q, %v; want a refusal saying the link leads outside", name, input, out, err)
			}
			if strings.Contains(out, "beside the checkout") || strings.Contains(out, "sibling.txt") {
				t.Errorf("%s %v read the checkout's parent: %q", name, input, out)
			}
		}
	})
}

// TestReadFileSizeCap: a file of exactly 64 MiB is read (a page of its
// lines), one byte more is refused with what to do instead. The files are
// sparse past their first lines.
func TestReadFileSizeCap(t *testing.T) {
	root := edgeFixture(t)
	c := open(t, root)
	for _, tc := range []struct {
		size int64
		want string
		err  bool
	}{
		{64 << 20, "file: huge.txt\nsize: 67108864 bytes\nlines: 1 to ", false},
		{64<<20 + 1, "huge.txt is 67108865 bytes, more than read_file reads (64 MiB); search it with search_code instead.", true},
	} {
		p := filepath.Join(root, "huge.txt")
		if err := os.WriteFile(p, []byte(strings.Repeat("a line of text\n", 1000)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, tc.size); err != nil {
			t.Fatal(err)
		}
		out, err := call(t, c, "read_file", map[string]any{"path": "huge.txt"})
		switch {
		case tc.err && (err == nil || err.Error() != tc.want):
			t.Errorf("%d bytes: got %.200q, %v; want the refusal %q", tc.size, out, err, tc.want)
		case !tc.err && (err != nil || !strings.HasPrefix(out, tc.want) || !strings.Contains(out, "     1\ta line of text")):
			t.Errorf("%d bytes: got %.200q, %v; want its first lines", tc.size, out, err)
		}
	}
}
