package checkout

// Running git: always read-only, bounded in time and output, with nothing
// of the caller's or the repository's configuration that could run a
// program or write a file. And what a checkout is to the server: its
// branch, commit and origin remote.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// gitArgs come before every command. Each -c empties a setting that could
// run a program (fsmonitor, hooks, a pager, an external diff) or write
// (the untracked cache); --literal-pathspecs makes a path mean itself.
func (c *Checkout) gitArgs(args ...string) []string {
	base := []string{
		"-c", "core.fsmonitor=", "-c", "core.hooksPath=" + os.DevNull, "-c", "core.pager=cat",
		"-c", "core.untrackedCache=false", "-c", "core.quotePath=false", "-c", "diff.external=",
		"-c", "color.ui=never", "-c", "log.showSignature=false", "-c", "grep.fallbackToNoIndex=false",
		"--no-pager", "--literal-pathspecs", "-C", c.root,
	}
	return append(base, args...)
}

// gitEnv is the environment git runs in: the caller's without any GIT_*
// variable (which could point git at another repository or config), with
// prompts, optional locks and lazy fetches off.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1",
		"GIT_PAGER=cat", "PAGER=cat", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
}

// stderrBuffer keeps the first maxStderr bytes git writes to stderr.
type stderrBuffer struct{ bytes.Buffer }

func (b *stderrBuffer) Write(p []byte) (int, error) {
	if room := maxStderr - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// gitError is a failed git command as one line: git's first line of
// stderr, at most 300 characters.
func gitError(ctx context.Context, what string, stderr *stderrBuffer, err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && stderr.Len() == 0 {
		return errQuietFailure
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return refuse("Git took longer than %s to %s; narrow the request (a path, a smaller limit).", GitTimeout, what)
	}
	line := strings.TrimSpace(stderr.String())
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimPrefix(strings.TrimPrefix(line, "fatal: "), "error: ")
	if r := []rune(line); len(r) > 300 {
		line = string(r[:300]) + "…"
	}
	if line == "" {
		line = err.Error()
	}
	return refuse("Git could not %s: %s.", what, strings.TrimRight(line, "."))
}

// stream runs git with args and calls each for every line of its output
// (without the line end) until each returns false, when git is stopped.
// Lines are split on sep ('\n' or 0).
func (c *Checkout) stream(ctx context.Context, what string, sep byte, each func(line []byte) bool, args ...string) error {
	if c.git == "" {
		return errNoGit
	}
	ctx, cancel := context.WithTimeout(ctx, GitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.git, c.gitArgs(args...)...)
	cmd.Env = gitEnv()
	cmd.Dir = c.root
	cmd.WaitDelay = GitTimeout / 10
	var stderr stderrBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return refuse("Git could not be started: %s.", shortErr(err))
	}
	r := bufio.NewReaderSize(out, 64<<10)
	stopped := false
	for {
		line, rerr := r.ReadSlice(sep)
		if errors.Is(rerr, bufio.ErrBufferFull) {
			// A line longer than the buffer: keep its start, skip the rest.
			full := append([]byte(nil), line...)
			for errors.Is(rerr, bufio.ErrBufferFull) {
				_, rerr = r.ReadSlice(sep)
			}
			line = full
		}
		if len(line) > 0 {
			if !each(bytes.TrimSuffix(line, []byte{sep})) {
				stopped = true
				break
			}
		}
		if rerr != nil {
			break
		}
	}
	if stopped {
		cancel()
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		return nil
	}
	if err := cmd.Wait(); err != nil {
		return gitError(ctx, what, &stderr, err)
	}
	return nil
}

// output runs git and returns its output, at most limit bytes of it.
func (c *Checkout) output(ctx context.Context, what string, limit int, args ...string) (string, error) {
	var b strings.Builder
	err := c.stream(ctx, what, '\n', func(line []byte) bool {
		if b.Len()+len(line)+1 > limit {
			return false
		}
		b.Write(line)
		b.WriteByte('\n')
		return true
	}, args...)
	return strings.TrimSuffix(b.String(), "\n"), err
}

// errQuietFailure is git exiting 1 without a word: git grep that found
// nothing, symbolic-ref on a detached HEAD.
var errQuietFailure = &Error{Message: "Git found nothing."}

var errNoGit = &Error{Message: "Git was not found on this computer, so the history cannot be read; list_files, read_file and search_code still work."}

// isTopLevel reports whether the root is the top of a Git work tree.
func (c *Checkout) isTopLevel() bool {
	top, err := c.output(context.Background(), "find the work tree", 4096, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	resolved, err := filepath.EvalSymlinks(filepath.FromSlash(strings.TrimSpace(top)))
	return err == nil && resolved == c.root
}

// GitInstalled reports whether git is on PATH.
func GitInstalled() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// Info is what the server shows of a checkout.
type Info struct {
	Git    bool   `json:"git"`              // git was found on this computer
	Branch string `json:"branch,omitempty"` // the current branch; empty on a detached HEAD
	Head   string `json:"head,omitempty"`   // the current commit's full hash; empty before the first commit
	Origin string `json:"origin,omitempty"` // git remote get-url origin
}

// Inspect checks that dir is an existing folder at the top of a Git work
// tree and says what it holds. Without git on PATH it only checks that the
// folder exists and has .git (Info.Git is then false). The error says what
// is wrong, in a sentence a person can act on.
func Inspect(ctx context.Context, dir string) (Info, error) {
	if !filepath.IsAbs(dir) {
		return Info{}, fmt.Errorf("%s is not an absolute path", dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return Info{}, fmt.Errorf("the folder %s does not exist", dir)
	}
	if !st.IsDir() {
		return Info{}, fmt.Errorf("%s is a file, not a folder", dir)
	}
	c, err := Open(dir)
	if err != nil {
		return Info{}, err
	}
	if c.git == "" {
		if _, err := os.Lstat(filepath.Join(c.root, ".git")); err != nil {
			return Info{}, fmt.Errorf("%s is not a Git work tree (it has no .git)", dir)
		}
		return Info{}, nil
	}
	if !c.repo {
		top, err := c.output(ctx, "find the work tree", 4096, "rev-parse", "--show-toplevel")
		if err == nil && top != "" {
			return Info{}, fmt.Errorf("%s is inside the Git work tree %s; give that folder instead", dir, filepath.FromSlash(top))
		}
		return Info{}, fmt.Errorf("%s is not a Git work tree; run git init there, or choose the folder you cloned", dir)
	}
	return c.Info(ctx), nil
}

// Info says the checkout's branch, commit and origin remote, as far as Git
// can tell; what it cannot tell is left empty.
func (c *Checkout) Info(ctx context.Context) Info {
	if !c.repo {
		return Info{Git: c.git != ""}
	}
	info := Info{Git: true}
	info.Branch, _ = c.output(ctx, "read the branch", 1024, "symbolic-ref", "--quiet", "--short", "HEAD")
	info.Head, _ = c.output(ctx, "read the commit", 1024, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	info.Origin, _ = c.output(ctx, "read the origin remote", 4096, "remote", "get-url", "origin")
	return info
}

// ParseRemote reads the owner/name a remote URL names: HTTPS
// (https://github.com/owner/name.git), SSH (ssh://git@host:22/owner/name)
// and scp-like (git@host:owner/name.git) remotes of GitHub, GitLab or any
// host. A path of more than two parts (a GitLab subgroup) gives its last
// two. ok is false for a URL with no such path, such as a local folder.
func ParseRemote(remote string) (owner, name string, ok bool) {
	s := strings.TrimSpace(remote)
	var p string
	switch {
	case strings.Contains(s, "://"):
		_, rest, _ := strings.Cut(s, "://")
		_, p, ok = strings.Cut(rest, "/")
		if !ok {
			return "", "", false
		}
	case strings.Contains(s, ":") && !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "."):
		host, rest, _ := strings.Cut(s, ":")
		if strings.Contains(host, "/") || len(host) == 1 { // a path, or a Windows drive
			return "", "", false
		}
		p = rest
	default:
		return "", "", false
	}
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
	parts := strings.Split(p, "/")
	if len(parts) < 2 {
		return "", "", false
	}
	owner, name = parts[len(parts)-2], parts[len(parts)-1]
	if owner == "" || name == "" || !utf8.ValidString(owner+name) {
		return "", "", false
	}
	return owner, name, true
}
