package checkout_test

// Benchmarks on a generated checkout of 20,000 files (200 folders of 100
// Go-like files, one commit), each measured side by side with the plain
// git command it wraps, in the same run:
//
//	go test ./checkout -run '^$' -bench . -benchtime 20x

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chopin-desktop/chopin/checkout"
)

const benchFiles = 20000

var (
	bigOnce sync.Once
	bigDir  string
	bigErr  error
)

// bigCheckout makes the 20,000-file checkout once per run; TestMain
// removes it. One file in 150 holds the word the search looks for.
func bigCheckout(b *testing.B) string {
	bigOnce.Do(func() {
		bigDir, bigErr = os.MkdirTemp("", "chopin-bench-checkout-")
		if bigErr != nil {
			return
		}
		for i := range benchFiles {
			var body strings.Builder
			fmt.Fprintf(&body, "package pkg%d\n\n", i/100)
			for l := range 20 {
				fmt.Fprintf(&body, "// line %d of file %d: the engine plans the work\nfunc F%d_%d() int { return %d }\n", l, i, i, l, l)
			}
			if i%150 == 0 {
				body.WriteString("// quartzneedle marks this file\n")
			}
			p := filepath.Join(bigDir, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%05d.go", i))
			if bigErr = os.MkdirAll(filepath.Dir(p), 0o755); bigErr != nil {
				return
			}
			if bigErr = os.WriteFile(p, []byte(body.String()), 0o644); bigErr != nil {
				return
			}
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "Generated"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = bigDir
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=b@example.com",
				"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=b@example.com")
			if out, err := cmd.CombinedOutput(); err != nil {
				bigErr = fmt.Errorf("git %v: %v\n%s", args, err, out)
				return
			}
		}
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

// plainGit runs git in dir as a person would, for the baseline.
func plainGit(b *testing.B, dir string, args ...string) int {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return len(out)
}

// BenchmarkSearchCode: search_code for a word in 134 files of the 20,000,
// and plain git grep for the same word, any case, over the same tree.
func BenchmarkSearchCode(b *testing.B) {
	dir := bigCheckout(b)
	c, err := checkout.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	in := checkout.SearchInput{Pattern: "quartzneedle"}
	b.Run("search_code", func(b *testing.B) {
		for b.Loop() {
			out, err := c.SearchCode(context.Background(), in)
			if err != nil || !strings.Contains(out, "hits: 134\n") {
				b.Fatalf("%v %.200s", err, out)
			}
		}
	})
	b.Run("git_grep", func(b *testing.B) {
		for b.Loop() {
			plainGit(b, dir, "grep", "-n", "-I", "-i", "-F", "-e", "quartzneedle")
		}
	})
}

// BenchmarkListFiles: list_files' first page (1,000 of the 20,000 paths,
// sorted), and plain git ls-files of the whole tree.
func BenchmarkListFiles(b *testing.B) {
	dir := bigCheckout(b)
	c, err := checkout.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("list_files_first_page", func(b *testing.B) {
		for b.Loop() {
			out, err := c.ListFiles(context.Background(), checkout.ListInput{})
			if err != nil || !strings.HasPrefix(out, "files: 1 to 1000 of 20000 in the checkout\n") {
				b.Fatalf("%v %.200s", err, out)
			}
		}
	})
	b.Run("git_ls_files", func(b *testing.B) {
		for b.Loop() {
			plainGit(b, dir, "ls-files", "--cached", "--others", "--exclude-standard")
		}
	})
}
