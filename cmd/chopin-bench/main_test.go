package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// The harness run in its quick mode, so that it keeps working as the
// server changes: every row measured (a small catalog, few repeats), the
// table printed whole. What it measures in this mode is not kept; a timed
// assertion would be flaky on a loaded machine, so only the shape is
// checked.

// TestMain lets the test binary be the relay too, as the harness binary is
// when it starts its relay.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "relay" {
		if err := runRelay(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

func TestQuickRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the harness reads /proc")
	}
	var out bytes.Buffer
	if err := run(context.Background(), options{quick: true}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	t.Log("\n" + table)
	for _, want := range []string{
		"rows: measured ", "load average", "| Row | Goal | Measured | Baseline | Ratio | Met? | Command |", "`go run ./cmd/chopin-bench -only bigplan`",
		"listing search matching 10 of 200", "listing search, 500 documents",
		"edit ack p50 over `/ws`", "edit ack p99 over `/ws`", "CPU per edit", "250 KB plan vs 10 KB plan",
		"start to first `/healthz`, empty database", "start to first page (`/`, signed in), 500 documents",
		"after a crash (kill -9): the whole check", "the start's own steps", "(`chopin --version`)", "idle process RSS before any room", "open rooms of 10 KB",
		"fan-out, 1 writer → 20 readers", "fan-out, delivery latency p99", "vs a bare SQLite commit of its rows", "agent parts at 1,000/s", "most per second", "shrinking a",
		"the floor under those", "release binary",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no %q", want)
		}
	}
	if n := strings.Count(table, "\n| ") - 2; n != 24 {
		t.Errorf("%d rows, want 24", n)
	}
}

func TestOnlyNamesRows(t *testing.T) {
	err := run(context.Background(), options{only: "search,nonsense"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `no row "nonsense"`) {
		t.Fatalf("got %v", err)
	}
}

// The doc's harness table is replaced between its markers and nowhere
// else: every byte before the begin marker's line end and from the end
// marker on is the file's own.
func TestReplaceDocTable(t *testing.T) {
	before := "# Performance\n\nProse, with a `|` table:\n\n| a | b |\n| --- | --- |\n\n" + docBegin
	after := docEnd + "\n\nMore prose, no newline at the end"
	doc := before + "\nthe old table\n| x | `go run ./cmd/chopin-bench -only x` |\n" + after
	out, err := replaceDocTable([]byte(doc), "the new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := before + "\nthe new table\n" + after; string(out) != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	again, err := replaceDocTable(out, "the new table\n")
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("a second write of the same table changed the doc: %q, %v", again, err)
	}
}

// A write replaces the harness's rows and keeps the rows copied by hand
// from other benchmarks, after its own, in the one table.
func TestReplaceDocTableKeepsOtherRows(t *testing.T) {
	hand := "| keystroke applied | none set | 13.7 µs; 2026-12-02 | - | - | - | `go test ./room -run '^$' -bench ChangeSetApply` |\n"
	doc := docBegin + "\nMeasured before\n\n" + tableHeader +
		"| edit ack | under 1.1× | 0.9 ms | 0.8 ms | 1.12× | no | `go run ./cmd/chopin-bench -only ack` |\n" + hand + docEnd + "\n"
	section := "Measured now\n\n" + tableHeader + "| edit ack | under 1.1× | 0.5 ms | 0.5 ms | 1.00× | yes | `go run ./cmd/chopin-bench -only ack` |\n"
	out, err := replaceDocTable([]byte(doc), section)
	if err != nil {
		t.Fatal(err)
	}
	if want := docBegin + "\n" + section + hand + docEnd + "\n"; string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestReplaceDocTableRefuses(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"no markers", "# Performance\n", "no chopin-bench table markers (neither is there)"},
		{"no end", docBegin + "\n", "(the end marker is missing)"},
		{"no begin", "\n" + docEnd + "\n", "(the begin marker is missing)"},
		{"end first", docEnd + "\n" + docBegin + "\n", "end marker comes before its begin marker"},
		{"twice", docBegin + "\n" + docEnd + "\n" + docBegin + "\n" + docEnd + "\n", "more than once (2 begin, 2 end)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := replaceDocTable([]byte(c.doc), "table\n")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %q, %v; want an error saying %q", out, err, c.want)
			}
		})
	}
}

// -write-doc checks the doc before it measures anything, and leaves a doc
// it refuses as it was.
func TestWriteDocRefusedBeforeMeasuring(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/performance.md"
	doc := "# Performance\n\nNo markers here.\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    options
		want string
	}{
		{options{writeDoc: path}, "no chopin-bench table markers"},
		{options{writeDoc: path, only: "ack"}, "leave out -only, -quick and -fan-readers"},
		{options{writeDoc: path, quick: true}, "leave out -only, -quick and -fan-readers"},
		{options{writeDoc: path, fanReaders: 1}, "leave out -only, -quick and -fan-readers"},
		{options{writeDoc: dir + "/absent.md"}, "no such file"},
	} {
		err := run(context.Background(), c.o, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error saying %q", c.o, err, c.want)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != doc {
		t.Errorf("the refused doc changed: %q", got)
	}
}

func TestWriteDocTable(t *testing.T) {
	path := t.TempDir() + "/performance.md"
	doc := "top\n" + docBegin + "\nold\n" + docEnd + "\nbottom\n"
	if err := os.WriteFile(path, []byte(doc), 0o640); err != nil {
		t.Fatal(err)
	}
	table := runTable{command: commandLine([]string{"-bin", "/tmp/chopin perf", "-write-doc", "docs/performance.md"}), cpus: 2,
		goVersion: "go1.x", binary: "a binary", loadBefore: "1 2 3", loadAfter: "4 5 6",
		rows: []row{{"ack", "edit ack", "1 ms", "2 ms", "0.50×", "under 1.1×", "yes"}}}.markdown()
	if err := writeDocTable(path, table); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "top\n" + docBegin + "\n" + table + docEnd + "\nbottom\n"; string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, want := range []string{"`go run ./cmd/chopin-bench -bin '/tmp/chopin perf' -write-doc docs/performance.md`",
		"on 2 cores", "load average 1 2 3 before, 4 5 6 after", "| edit ack | under 1.1× | 1 ms | 2 ms | 0.50× | yes | `go run ./cmd/chopin-bench -only ack` |"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no %q:\n%s", want, table)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
}

// The doc's own table keeps its hand-copied rows through a write: every
// row whose command is not the harness's, in its order.
func TestDocTableKeepsHandRows(t *testing.T) {
	doc, err := os.ReadFile("../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(docBegin)), bytes.Index(doc, []byte(docEnd))
	if i < 0 || j < i {
		t.Fatal("docs/performance.md has no chopin-bench table")
	}
	hand := keptRows(doc[i:j])
	if n := strings.Count(hand, "\n"); n < 10 {
		t.Fatalf("%d hand rows in docs/performance.md's table: %q", n, hand)
	}
	out, err := replaceDocTable(doc, "measured\n\n"+tableHeader)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(doc[:i+len(docBegin)]) + "\nmeasured\n\n" + tableHeader + hand + string(doc[j:]); string(out) != want {
		t.Errorf("a write lost or moved the hand rows")
	}
	if strings.Contains(hand, "`"+harnessCommand+" -only") {
		t.Errorf("the hand rows keep a harness row: %q", hand)
	}
}
