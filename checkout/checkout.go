package checkout

// A checkout and the one rule every tool goes through: a path the model
// gives is resolved inside the checkout, or refused with a sentence that
// says why and what to give instead. Resolve and OpenFile are that rule for
// any folder, for a caller with paths of its own (the ACP bridge's file
// reads): followed through every symbolic link, never out of the folder or
// into .git, and a file opened only when it is a regular one.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The bounds of a result, as the tools' descriptions state them.
const (
	// MaxResultBytes bounds read_file, git_log and git_show results, as
	// read_plan's are bounded: a harness may keep only the head and tail of
	// a longer one.
	MaxResultBytes = 16000
	// ListPage is how many paths one list_files result names at most.
	ListPage = 1000
	// maxListBytes bounds a list_files page whose names are unusually long.
	maxListBytes = 64 << 10
	// MaxHits is how many lines one search_code result names at most.
	MaxHits = 200
	// hitContext is the most characters of a matching line a hit shows.
	hitContext = 200
	// DefaultLogLimit and MaxLogLimit bound git_log's commits.
	DefaultLogLimit = 20
	MaxLogLimit     = 100
	// GitTimeout is how long one git command may run.
	GitTimeout = 10 * time.Second
	// maxStderr is how much of git's stderr is kept; one line of it, at most
	// 300 characters, reaches an error.
	maxStderr = 4096
	// maxListed bounds how many paths a listing reads before giving up, so
	// a folder of millions of files cannot fill memory.
	maxListed = 1_000_000
)

// Error is a refused or failed tool call: Message says why and what to do,
// in one sentence a model can act on.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

func refuse(format string, args ...any) error { return &Error{Message: fmt.Sprintf(format, args...)} }

// Checkout is one repository's local checkout.
type Checkout struct {
	// Set at construction, never changed.
	root string // absolute, with symbolic links resolved
	git  string // the git program, "" when there is none on PATH
	repo bool   // root is the top of a Git work tree (and git is there)
}

// Open opens the checkout at dir, an absolute path to an existing folder.
// It looks git up on PATH; without it, or when dir is no Git work tree,
// the tools walk the folder instead (HasGit is then false).
func Open(dir string) (*Checkout, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("the checkout %q is not an absolute path", dir)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("the checkout %s cannot be opened: %w", dir, err)
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("the checkout %s cannot be opened: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("the checkout %s is not a folder", dir)
	}
	c := &Checkout{root: root}
	if g, err := exec.LookPath("git"); err == nil {
		c.git = g
		c.repo = c.isTopLevel()
	}
	return c, nil
}

// Root is the checkout's folder, with symbolic links resolved.
func (c *Checkout) Root() string { return c.root }

// GitFound reports whether git was found on PATH.
func (c *Checkout) GitFound() bool { return c.git != "" }

// HasGit reports whether the tools use Git: git is on PATH and the
// checkout is the top of a Git work tree.
func (c *Checkout) HasGit() bool { return c.repo }

// relPath checks a path the model gave and returns it cleaned, with
// forward slashes, "" for the checkout itself. It refuses "..", absolute
// paths (even inside the checkout) and .git, before anything touches the
// disk.
func relPath(p string) (string, error) {
	orig := p
	p = strings.ReplaceAll(p, "\\", "/")
	if p == "" || p == "." || p == "./" {
		return "", nil
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(orig) || filepath.VolumeName(orig) != "" || (len(p) >= 2 && p[1] == ':') {
		return "", refuse("%q is an absolute path; paths are relative to the checkout's top folder, such as src/main.go.", orig)
	}
	if strings.ContainsRune(p, 0) {
		return "", refuse("%q holds a NUL character; give a path such as src/main.go.", orig)
	}
	for _, part := range strings.Split(p, "/") {
		switch {
		case part == "..":
			return "", refuse("%q goes up with \"..\"; paths stay inside the checkout, relative to its top folder.", orig)
		case strings.EqualFold(part, ".git"):
			return "", refuse("%q is inside .git, which these tools never read; use git_log and git_show for the history.", orig)
		}
	}
	return strings.TrimPrefix(path.Clean(p), "./"), nil
}

// resolve returns the file or folder a path names, on disk, after
// following symbolic links, and refuses one whose target is outside the
// checkout or inside .git.
func (c *Checkout) resolve(p string) (rel, abs string, err error) {
	rel, err = relPath(p)
	if err != nil {
		return "", "", err
	}
	if rel == "" {
		return "", c.root, nil
	}
	abs, err = resolveIn(c.root, filepath.Join(c.root, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", refuse("There is no %s in the checkout; list_files shows what there is.", rel)
	case errors.Is(err, ErrOutside):
		return "", "", refuse("%s is a symbolic link that leads outside the checkout, which these tools never follow.", rel)
	case errors.Is(err, ErrGit):
		return "", "", refuse("%s leads into .git, which these tools never read.", rel)
	case err != nil:
		return "", "", refuse("%s cannot be read: %s.", rel, shortErr(err))
	}
	return rel, abs, nil
}

// Why Resolve and OpenFile refuse a path; each caller words it for its own
// reader.
var (
	ErrOutside = errors.New("the path leads outside the folder")
	ErrGit     = errors.New("the path leads into .git")
	ErrFolder  = errors.New("the path is a folder")
	ErrNotFile = errors.New("the path is not a regular file") // a named pipe, a device, a socket
)

// Resolve returns path, an absolute path, with every symbolic link on its
// way followed, when it leads to root or below it, and into no .git folder
// at any depth, in any letter case (a nested repository's is refused as
// the checkout's own is). Otherwise its error is ErrOutside, ErrGit, or
// the file system's (fs.ErrNotExist among them) when the path cannot be
// followed.
func Resolve(root, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%q is not an absolute path", path)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	return resolveIn(realRoot, path)
}

// resolveIn is Resolve with root's own links already resolved.
func resolveIn(root, path string) (string, error) {
	abs, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return "", err
	}
	r, err := filepath.Rel(root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", ErrOutside
	}
	for _, part := range strings.Split(filepath.ToSlash(r), "/") {
		if strings.EqualFold(part, ".git") {
			return "", ErrGit
		}
	}
	return abs, nil
}

// OpenFile opens for reading the regular file that path names inside
// root, as Resolve finds it, and returns it with its information.
// Otherwise its error is one of Resolve's, ErrFolder, ErrNotFile or the
// file system's.
func OpenFile(root, path string) (*os.File, fs.FileInfo, error) {
	abs, err := Resolve(root, path)
	if err != nil {
		return nil, nil, err
	}
	return openRegular(abs)
}

// openRegular opens abs when it is a regular file, and never waits on one
// that is not: a named pipe would wait for a writer, and a device may
// never answer. It is refused before it is opened; the open does not
// block, and what it opened is checked again, in case the file was
// replaced meanwhile.
func openRegular(abs string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(abs)
	if err != nil {
		return nil, nil, err
	}
	if err := regular(st); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = regular(st)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

func regular(st fs.FileInfo) error {
	switch {
	case st.IsDir():
		return ErrFolder
	case !st.Mode().IsRegular():
		return ErrNotFile
	}
	return nil
}

// shortErr is an OS error without the absolute path it may carry.
func shortErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}
