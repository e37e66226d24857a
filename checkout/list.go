package checkout

// list_files: the checkout's files, tracked and untracked but not ignored,
// in path order, a page at a time. Without Git, the folder walked with the
// top-level .gitignore.

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	gitignore "github.com/sabhiram/go-gitignore"
)

// ListInput is list_files' input.
type ListInput struct {
	Path   string `json:"path,omitempty"`   // a folder to list, relative to the checkout
	Glob   string `json:"glob,omitempty"`   // such as *.go or src/**/*_test.go
	Cursor string `json:"cursor,omitempty"` // the next: line of the previous page
}

// ListFiles lists one page of files: a header, then one path a line.
func (c *Checkout) ListFiles(ctx context.Context, in ListInput) (string, error) {
	rel, abs, err := c.resolve(in.Path)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return "", refuse("%s is a file, not a folder; read it with read_file.", rel)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return "", refuse("The glob %q is not a valid pattern; use * for any name, ** for any folders, such as src/**/*.go.", in.Glob)
	}
	files, err := c.files(ctx, rel)
	if err != nil {
		return "", err
	}
	if in.Glob != "" {
		files = slices.DeleteFunc(files, func(f string) bool { return !globMatch(in.Glob, f) })
	}
	start := 0
	if in.Cursor != "" {
		start, _ = slices.BinarySearch(files, in.Cursor)
		if start < len(files) && files[start] == in.Cursor {
			start++
		}
	}
	page, size := []string{}, 0
	for _, f := range files[start:] {
		if len(page) == ListPage || size+len(f)+1 > maxListBytes {
			break
		}
		page = append(page, f)
		size += len(f) + 1
	}
	var b strings.Builder
	where := "the checkout"
	if rel != "" {
		where = rel + "/"
	}
	if in.Glob != "" {
		where += " matching " + in.Glob
	}
	switch {
	case len(files) == 0:
		fmt.Fprintf(&b, "files: none in %s\n", where)
	case len(page) == 0:
		fmt.Fprintf(&b, "files: none after %s in %s (%d in all)\n", in.Cursor, where, len(files))
	default:
		fmt.Fprintf(&b, "files: %d to %d of %d in %s\n", start+1, start+len(page), len(files), where)
	}
	if end := start + len(page); end < len(files) {
		next := in
		next.Cursor = page[len(page)-1]
		raw, _ := json.Marshal(next)
		fmt.Fprintf(&b, "next: list_files %s\n", raw)
	}
	for _, f := range page {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// globMatch matches a glob against a path relative to the checkout; a glob
// without a slash matches the file's name in any folder.
func globMatch(glob, file string) bool {
	if !strings.Contains(glob, "/") {
		ok, _ := doublestar.Match(glob, path.Base(file))
		return ok
	}
	ok, _ := doublestar.Match(glob, file)
	return ok
}

// files returns every file under the folder rel ("" for all), sorted, with
// paths relative to the checkout.
func (c *Checkout) files(ctx context.Context, rel string) ([]string, error) {
	if !c.repo {
		return c.walk(ctx, rel, nil)
	}
	args := []string{"ls-files", "-z", "--cached", "--others", "--exclude-standard"}
	if rel != "" {
		args = append(args, "--", rel)
	}
	var files []string
	err := c.stream(ctx, "list the files", 0, func(line []byte) bool {
		f := string(line)
		if !hasGitPart(f) {
			files = append(files, f)
		}
		return len(files) < maxListed
	}, args...)
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// hasGitPart reports whether a path has a .git part (a submodule's .git
// file, a nested repository's folder).
func hasGitPart(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}

// walk lists the folder rel by walking it, leaving out .git and what the
// top-level .gitignore ignores, without following symbolic links, for at
// most GitTimeout. visit, when set, is called for each file instead of
// collecting it, and stops the walk by returning false.
func (c *Checkout) walk(ctx context.Context, rel string, visit func(ctx context.Context, rel, abs string) bool) ([]string, error) {
	// The walk is bounded in time like a git command.
	ctx, cancel := context.WithTimeout(ctx, GitTimeout)
	defer cancel()
	ignore, _ := gitignore.CompileIgnoreFile(filepath.Join(c.root, ".gitignore"))
	start := filepath.Join(c.root, filepath.FromSlash(rel))
	var files []string
	errStop := fs.SkipAll
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if p == start {
				return err
			}
			return nil // an unreadable folder is left out
		}
		r, _ := filepath.Rel(c.root, p)
		r = filepath.ToSlash(r)
		if r == "." {
			return nil
		}
		if strings.EqualFold(d.Name(), ".git") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if ignore != nil && ignore.MatchesPath(r+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if ignore != nil && ignore.MatchesPath(r) {
			return nil
		}
		if visit != nil {
			if !visit(ctx, r, p) {
				return errStop
			}
			return nil
		}
		files = append(files, r)
		if len(files) >= maxListed {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		if ctx.Err() != nil {
			return nil, refuse("Walking the folder took longer than %s; give a path to narrow it.", GitTimeout)
		}
		return nil, refuse("The folder could not be listed: %s.", shortErr(err))
	}
	slices.Sort(files)
	return files, nil
}
