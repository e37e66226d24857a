package checkout

// search_code: git grep over tracked and untracked files, ignored ones
// left out, at most MaxHits lines, each with its file, number and a
// trimmed line. Without Git, the folder walked and each text file searched.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SearchInput is search_code's input.
type SearchInput struct {
	Pattern       string `json:"pattern"`
	Path          string `json:"path,omitempty"`          // a file or folder to search in
	Regex         bool   `json:"regex,omitempty"`         // pattern is an extended regular expression
	CaseSensitive bool   `json:"caseSensitive,omitempty"` // default: ignore case
}

// maxPattern bounds a pattern: a search is a few words or one expression.
const maxPattern = 1000

// hit is one matching line.
type hit struct {
	file string
	line int
	text string
}

// SearchCode returns a header (the pattern, how many hits, whether the
// list was cut) and one hit a line: file:line: text.
func (c *Checkout) SearchCode(ctx context.Context, in SearchInput) (string, error) {
	if in.Pattern == "" {
		return "", refuse("search_code needs a pattern, such as a function's name.")
	}
	if len(in.Pattern) > maxPattern || strings.ContainsAny(in.Pattern, "\n\x00") {
		return "", refuse("The pattern must be one line of at most %d bytes.", maxPattern)
	}
	rel, _, err := c.resolve(in.Path)
	if err != nil {
		return "", err
	}
	var hits []hit
	more := false
	if c.repo {
		hits, more, err = c.gitGrep(ctx, in, rel)
	} else {
		hits, more, err = c.walkGrep(ctx, in, rel)
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pattern: %s", in.Pattern)
	if in.Regex {
		b.WriteString(" (regular expression")
	} else {
		b.WriteString(" (text")
	}
	if in.CaseSensitive {
		b.WriteString(", case-sensitive)")
	} else {
		b.WriteString(", any case)")
	}
	if rel != "" {
		fmt.Fprintf(&b, " in %s", rel)
	}
	b.WriteByte('\n')
	switch {
	case len(hits) == 0:
		b.WriteString("hits: none\n")
	case more:
		fmt.Fprintf(&b, "hits: the first %d; the list was cut, so narrow the pattern or give a path\n", len(hits))
	default:
		fmt.Fprintf(&b, "hits: %d\n", len(hits))
	}
	for _, h := range hits {
		fmt.Fprintf(&b, "%s:%d: %s\n", h.file, h.line, h.text)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// gitGrep runs git grep and reads its hits as file NUL line NUL text.
func (c *Checkout) gitGrep(ctx context.Context, in SearchInput, rel string) ([]hit, bool, error) {
	args := []string{"grep", "--untracked", "--exclude-standard", "-I", "-n", "--null", "--no-color", "--full-name"}
	if in.Regex {
		args = append(args, "-E")
	} else {
		args = append(args, "-F")
	}
	if !in.CaseSensitive {
		args = append(args, "-i")
	}
	args = append(args, "-e", in.Pattern, "--")
	if rel != "" {
		args = append(args, rel)
	}
	var hits []hit
	more := false
	err := c.stream(ctx, "search", '\n', func(line []byte) bool {
		file, rest, ok := bytes.Cut(line, []byte{0})
		if !ok {
			return true
		}
		num, text, ok := bytes.Cut(rest, []byte{0})
		n, err := strconv.Atoi(string(num))
		if !ok || err != nil || hasGitPart(string(file)) {
			return true
		}
		if len(hits) == MaxHits {
			more = true
			return false
		}
		hits = append(hits, hit{file: string(file), line: n, text: trimHit(text)})
		return true
	}, args...)
	if errors.Is(err, errQuietFailure) {
		return nil, false, nil // git grep exits 1, saying nothing, when nothing matched
	}
	if err != nil {
		return nil, false, err
	}
	return hits, more, nil
}

// walkGrep searches the walked folder's text files with Go's regexp.
func (c *Checkout) walkGrep(ctx context.Context, in SearchInput, rel string) ([]hit, bool, error) {
	expr := in.Pattern
	if !in.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if !in.CaseSensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, false, refuse("The pattern is not a regular expression Chopin can read: %s.", err)
	}
	var hits []hit
	more := false
	search := func(ctx context.Context, r, abs string) bool {
		// A symbolic link is searched only where it is named itself (and
		// resolve has checked it); the walk never follows one.
		if fi, err := os.Lstat(abs); err != nil || !fi.Mode().IsRegular() {
			return true
		}
		f, err := os.Open(abs)
		if err != nil {
			return true
		}
		defer f.Close()
		head := make([]byte, binarySniff)
		n, _ := f.Read(head)
		if bytes.IndexByte(head[:n], 0) >= 0 {
			return true
		}
		if _, err := f.Seek(0, 0); err != nil {
			return true
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if n%4096 == 0 && ctx.Err() != nil {
				more = true // out of time: the hits so far, said to be cut
				return false
			}
			if re.Match(sc.Bytes()) {
				if len(hits) == MaxHits {
					more = true
					return false
				}
				hits = append(hits, hit{file: r, line: n, text: trimHit(sc.Bytes())})
			}
		}
		return true
	}
	if rel != "" {
		if _, abs, err := c.resolve(rel); err == nil {
			if st, err := os.Stat(abs); err == nil && !st.IsDir() {
				search(ctx, rel, abs)
				return hits, more, nil
			}
		}
	}
	if _, err := c.walk(ctx, rel, search); err != nil {
		return nil, false, err
	}
	return hits, more, nil
}

// trimHit is a matching line as a hit shows it: valid UTF-8, without
// surrounding blanks, at most hitContext characters.
func trimHit(text []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(text), "\uFFFD"))
	if utf8.RuneCountInString(s) > hitContext {
		s = string([]rune(s)[:hitContext]) + "…"
	}
	return s
}
