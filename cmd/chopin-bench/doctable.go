package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The table as Markdown, with what a reader needs to trust it (the date,
// the machine, its load, the command line, the binary), and -write-doc:
// the same text put between two marker lines of docs/performance.md, so
// that the doc's harness rows are what the harness printed, never typed.
//
// The doc has one table of every figure: the harness's rows first, then
// rows copied by hand from the packages' benchmarks, each naming its own
// command. A write replaces the harness's rows and keeps the others.

// The marker lines of the doc's table. Everything outside them is left
// byte for byte as it was.
const (
	docBegin = "<!-- chopin-bench table: begin (written by chopin-bench -write-doc; do not edit by hand) -->"
	docEnd   = "<!-- chopin-bench table: end -->"
)

// runTable is one run's table and what it ran on.
type runTable struct {
	date                  time.Time
	command               string
	cpus                  int
	cpuModel              string
	goVersion             string
	binary                string
	loadBefore, loadAfter string
	took                  time.Duration
	rows                  []row
}

func (t runTable) markdown() string {
	var s strings.Builder
	fmt.Fprintf(&s, "The harness's rows: measured %s (UTC) by `%s`\n", t.date.Format("2006-01-02"), t.command)
	fmt.Fprintf(&s, "on %d cores", t.cpus)
	if t.cpuModel != "" {
		fmt.Fprintf(&s, " (%s)", t.cpuModel)
	}
	fmt.Fprintf(&s, ", %s/%s, harness built with %s; load average %s before, %s after; the run took %s.\n",
		runtime.GOOS, runtime.GOARCH, t.goVersion, t.loadBefore, t.loadAfter, t.took)
	fmt.Fprintf(&s, "Chopin measured: %s.\n\n", t.binary)
	s.WriteString(tableHeader)
	for _, r := range t.rows {
		met := r.met
		if met == "" {
			met = "-" // a row with no goal
		}
		fmt.Fprintf(&s, "| %s | %s | %s | %s | %s | %s | `%s -only %s` |\n", r.measure, r.goal, r.chopin, r.baseline, r.ratio, met, harnessCommand, r.name)
	}
	return s.String()
}

// The table's head, and how a row of the harness's own begins its command
// cell: the rows whose command is not the harness's are kept by a write.
const (
	tableHeader    = "| Row | Goal | Measured | Baseline | Ratio | Met? | Command |\n| --- | --- | --- | --- | --- | --- | --- |\n"
	harnessCommand = "go run ./cmd/chopin-bench"
)

// keptRows are the rows of the doc's table, between its markers, that the
// harness did not write: every table row but the head, the separator and
// the rows whose last cell runs the harness.
func keptRows(table []byte) string {
	var s strings.Builder
	for line := range strings.Lines(string(table)) {
		l := strings.TrimRight(line, "\n")
		if !strings.HasPrefix(l, "| ") || strings.Contains(tableHeader, l+"\n") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(l, "|"), " | ")
		if strings.HasPrefix(strings.TrimSpace(cells[len(cells)-1]), "`"+harnessCommand+" ") {
			continue
		}
		s.WriteString(l + "\n")
	}
	return s.String()
}

// commandLine is the run as a reader would type it again.
func commandLine(args []string) string {
	parts := []string{"go run ./cmd/chopin-bench"}
	for _, a := range args {
		if a == "" || strings.ContainsFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+", r))
		}) {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(raw)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// binaryText says which chopin the run measured: the module the harness
// built, at which commit, or the binary -bin named, with the Go version
// and commit its build recorded.
func (b *bench) binaryText() string {
	var s string
	if b.o.bin == "" {
		s = "the module in " + b.source
		if out, err := exec.Command("git", "-C", b.source, "rev-parse", "--short", "HEAD").Output(); err == nil {
			s += " at " + strings.TrimSpace(string(out))
			if st, err := exec.Command("git", "-C", b.source, "status", "--porcelain").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
				s += " with uncommitted changes"
			}
		}
		s += ", built by the harness"
	} else {
		s = "`" + b.o.bin + "`, given with `-bin`"
	}
	info, err := buildinfo.ReadFile(b.chopin)
	if err != nil {
		return s
	}
	s += "; its build records " + info.GoVersion
	for _, kv := range info.Settings {
		if kv.Key == "vcs.revision" {
			return s + " and commit " + kv.Value
		}
	}
	return s + " and no commit"
}

// replaceDocTable puts section between doc's marker lines, in place of
// what was there, and leaves every other byte as it was. The rows of the
// old table that the harness did not write follow section's table.
func replaceDocTable(doc []byte, section string) ([]byte, error) {
	nb, ne := bytes.Count(doc, []byte(docBegin)), bytes.Count(doc, []byte(docEnd))
	switch {
	case nb == 0 || ne == 0:
		return nil, fmt.Errorf("no chopin-bench table markers (%s): put the line %s where the table begins and the line %s where it ends",
			missing(nb == 0, ne == 0), docBegin, docEnd)
	case nb > 1 || ne > 1:
		return nil, fmt.Errorf("the chopin-bench table markers are there more than once (%d begin, %d end): which table is the harness's?", nb, ne)
	}
	i, j := bytes.Index(doc, []byte(docBegin)), bytes.Index(doc, []byte(docEnd))
	if j < i {
		return nil, errors.New("the chopin-bench table's end marker comes before its begin marker")
	}
	start := i + len(docBegin)
	out := make([]byte, 0, len(doc)+len(section))
	out = append(out, doc[:start]...)
	out = append(out, '\n')
	out = append(out, section...)
	out = append(out, keptRows(doc[start:j])...)
	return append(out, doc[j:]...), nil
}

func missing(begin, end bool) string {
	switch {
	case begin && end:
		return "neither is there"
	case begin:
		return "the begin marker is missing"
	}
	return "the end marker is missing"
}

// writeDocTable replaces the table between path's markers with section.
// The new file is written beside the old and renamed over it, so a failed
// write leaves the doc as it was.
func writeDocTable(path, section string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := replaceDocTable(doc, section)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".chopin-bench-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(out); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(st.Mode().Perm()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
