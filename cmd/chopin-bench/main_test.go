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
		"Machine: ", "load average", "| Measure | Chopin | Baseline | Ratio | Goal | Met? |",
		"listing search matching 10 of 200", "listing search, 500 documents",
		"edit ack p50 over `/ws`", "edit ack p99 over `/ws`", "CPU per edit", "250 KB plan vs 10 KB plan",
		"start to first `/healthz`", "(`chopin --version`)", "open rooms of 10 KB", "agent parts at 1,000/s", "most per second", "shrinking a",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no %q", want)
		}
	}
	if n := strings.Count(table, "\n| ") - 2; n != 12 {
		t.Errorf("%d rows, want 12", n)
	}
}

func TestOnlyNamesRows(t *testing.T) {
	err := run(context.Background(), options{only: "search,nonsense"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `no row "nonsense"`) {
		t.Fatalf("got %v", err)
	}
}
