package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The scripts in ui/tests that walk Chopin for a Go test (a browser, an MCP
// client) talk to it over their standard streams. A line the script prints
// that begins "@@ " is JSON: a step's result, {"step", "ok", "error", "ms"},
// or a question, {"ask", ...}, which the test answers with one line of
// JSON on the script's standard input. Every other line, and the script's
// standard error, goes to the test's log.

// scriptLine is one "@@ " line: a step's result or a question.
type scriptLine struct {
	Step, Error, Ask string
	OK               bool
	MS               int64
	raw              []byte // the whole line, for a question's own fields
}

// decode reads the line's other fields into v: a question's arguments.
func (m scriptLine) decode(v any) error { return json.Unmarshal(m.raw, v) }

// nodeScript is one run of a script with node.
type nodeScript struct {
	args    []string      // the script's path from ui/, then its arguments
	env     []string      // the environment, when not the test's own
	timeout time.Duration // catches a hang; the script's own waits are shorter
	step    func(m scriptLine)
	// answer is the reply to a question; nil for a script that asks none.
	answer func(m scriptLine) (any, error)
}

// run runs the script in ui with node and returns how many steps it
// reported. A script that fails, or does not finish in time, fails tb.
func (s nodeScript) run(tb testing.TB, ui, node string) (steps int) {
	tb.Helper()
	name := s.args[0][strings.LastIndex(s.args[0], "/")+1:]
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, s.args...)
	cmd.Dir = ui
	cmd.Env = s.env
	cmd.Stderr = &testLogWriter{t: tb, prefix: name + ": "}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "@@ ")
		if !ok {
			tb.Log(sc.Text())
			continue
		}
		m := scriptLine{raw: []byte(line)}
		if err := json.Unmarshal(m.raw, &m); err != nil {
			tb.Fatalf("%s said %q: %v", name, line, err)
		}
		if m.Step != "" {
			steps++
			s.step(m)
			continue
		}
		var reply any = map[string]string{"error": name + " asked " + m.Ask + ", and this test answers no question"}
		if s.answer != nil {
			var err error
			if reply, err = s.answer(m); err != nil {
				reply = map[string]string{"error": err.Error()}
			}
		}
		raw, _ := json.Marshal(reply)
		fmt.Fprintf(stdin, "%s\n", raw)
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		tb.Fatalf("%s did not finish in %s", name, s.timeout)
	}
	if err != nil {
		tb.Errorf("%s: %v", name, err)
	}
	return steps
}

// subtestStep reports each step as a subtest of t, failed with the
// script's error.
func subtestStep(t *testing.T) func(scriptLine) {
	return func(m scriptLine) {
		t.Run(m.Step, func(t *testing.T) {
			if !m.OK {
				t.Error(m.Error)
			} else if m.MS > 0 {
				t.Logf("%d ms", m.MS)
			}
		})
	}
}

// testLogWriter sends a child's output to the log, line by line.
type testLogWriter struct {
	t      testing.TB
	prefix string
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(w.prefix + line)
	}
	return len(p), nil
}
