package checkout

// git_log and git_show: the history of the checkout, or of one path, and
// one commit with its diff, each result at most MaxResultBytes and
// continued with the exact call a next: line names.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// LogInput is git_log's input.
type LogInput struct {
	Path  string `json:"path,omitempty"`
	Rev   string `json:"rev,omitempty"`   // default HEAD
	Limit int    `json:"limit,omitempty"` // default DefaultLogLimit, at most MaxLogLimit
	Skip  int    `json:"skip,omitempty"`  // commits to pass over first: how next: continues
}

// ShowInput is git_show's input.
type ShowInput struct {
	Rev    string `json:"rev"`
	Path   string `json:"path,omitempty"`   // only this path's part of the diff
	Offset int    `json:"offset,omitempty"` // the first line of the output, 1-based: how next: continues
}

// checkRev refuses a revision that could be read as an option, and one
// that names no commit.
func (c *Checkout) checkRev(ctx context.Context, rev string) (string, error) {
	if !c.repo {
		if c.git == "" {
			return "", errNoGit
		}
		return "", refuse("The checkout is not a Git work tree, so it has no history; list_files, read_file and search_code still work.")
	}
	if strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\x00\n") || len(rev) > 256 {
		return "", refuse("%q is not a revision; give a commit hash, a branch or tag name, or HEAD~2.", rev)
	}
	hash, err := c.output(ctx, "read the revision", 1024, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || hash == "" {
		return "", refuse("There is no commit named %q; git_log lists the commits, and HEAD is the current one.", rev)
	}
	return hash, nil
}

// GitLog lists commits: hash, date, author and subject, newest first.
func (c *Checkout) GitLog(ctx context.Context, in LogInput) (string, error) {
	if in.Limit < 0 || in.Skip < 0 {
		return "", refuse("limit and skip are whole numbers.")
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultLogLimit
	}
	limit = min(limit, MaxLogLimit)
	rev := in.Rev
	if rev == "" {
		rev = "HEAD"
	}
	rel, _, err := c.pathForHistory(in.Path)
	if err != nil {
		return "", err
	}
	if _, err := c.checkRev(ctx, rev); err != nil {
		return "", err
	}
	args := []string{"log", "--no-ext-diff", "--no-textconv", "--format=%h %ad %an: %s", "--date=short",
		fmt.Sprintf("--max-count=%d", limit+1), fmt.Sprintf("--skip=%d", in.Skip), "--end-of-options", rev, "--"}
	if rel != "" {
		args = append(args, rel)
	}
	var lines []string
	size := 0
	cut := false
	err = c.stream(ctx, "read the history", '\n', func(line []byte) bool {
		s := strings.ToValidUTF8(string(line), "\uFFFD")
		if len(lines) == limit || size+len(s)+1 > MaxResultBytes-512 {
			cut = true
			return false
		}
		lines = append(lines, s)
		size += len(s) + 1
		return true
	}, args...)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "history: %s", rev)
	if rel != "" {
		fmt.Fprintf(&b, " of %s", rel)
	}
	switch {
	case len(lines) == 0:
		b.WriteString(", no commits")
	default:
		fmt.Fprintf(&b, ", commits %d to %d, newest first", in.Skip+1, in.Skip+len(lines))
	}
	b.WriteByte('\n')
	if cut {
		next := in
		next.Skip = in.Skip + len(lines)
		next.Limit = limit
		raw, _ := json.Marshal(next)
		fmt.Fprintf(&b, "next: git_log %s\n", raw)
	}
	b.WriteString(strings.Join(lines, "\n"))
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// GitShow shows one commit: its header, message, and diff (of one path
// when Path is set), a page of lines at a time.
func (c *Checkout) GitShow(ctx context.Context, in ShowInput) (string, error) {
	if in.Rev == "" {
		return "", refuse("git_show needs rev: a commit hash from git_log, or HEAD.")
	}
	if in.Offset < 0 {
		return "", refuse("offset is a whole number from 1.")
	}
	rel, _, err := c.pathForHistory(in.Path)
	if err != nil {
		return "", err
	}
	hash, err := c.checkRev(ctx, in.Rev)
	if err != nil {
		return "", err
	}
	args := []string{"show", "--no-ext-diff", "--no-textconv", "--stat", "--patch", "--format=commit %H%nAuthor: %an%nDate:   %aI%n%n%B",
		"--end-of-options", hash, "--"}
	if rel != "" {
		args = append(args, rel)
	}
	first := max(in.Offset, 1)
	budget := MaxResultBytes - 512
	var body strings.Builder
	n, last := 0, first-1
	more := false
	err = c.stream(ctx, "show the commit", '\n', func(line []byte) bool {
		n++
		if n < first {
			return true
		}
		s := strings.ToValidUTF8(string(line), "\uFFFD")
		if len(s) > budget/2 {
			s = s[:budget/2] + " …(line cut)"
			s = strings.ToValidUTF8(s, "")
		}
		if body.Len()+len(s)+1 > budget {
			more = true
			return false
		}
		body.WriteString(s)
		body.WriteByte('\n')
		last = n
		return true
	}, args...)
	if err != nil {
		return "", err
	}
	var h strings.Builder
	fmt.Fprintf(&h, "show: %s", in.Rev)
	if rel != "" {
		fmt.Fprintf(&h, " (%s only)", rel)
	}
	fmt.Fprintf(&h, ", lines %d to %d of the output\n", first, last)
	if more {
		next := in
		next.Offset = last + 1
		raw, _ := json.Marshal(next)
		fmt.Fprintf(&h, "next: git_show %s\n", raw)
	}
	return h.String() + strings.TrimSuffix(body.String(), "\n"), nil
}

// pathForHistory checks a path for git_log and git_show: relative, inside,
// never .git. It need not exist now: a deleted file has a history.
func (c *Checkout) pathForHistory(p string) (string, string, error) {
	rel, err := relPath(p)
	if err != nil || rel == "" {
		return rel, "", err
	}
	if _, abs, err := c.resolve(p); err == nil {
		return rel, abs, nil
	} else if e, ok := err.(*Error); ok && !strings.HasPrefix(e.Message, "There is no ") {
		return "", "", err
	}
	return rel, "", nil
}
