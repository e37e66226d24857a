package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/room"
)

// chromiumPath is Debian's Chromium, which CI installs with apt; the tests
// never download a browser of their own.
const chromiumPath = "/usr/bin/chromium"

// TestBrowser drives the embedded web UI in a real Chromium: ui/tests/browser.mjs
// (playwright-core) against the real app on port 0. The script reports each
// step, which becomes a subtest here, and asks this test for what only the
// server side can do or see (the plan as stored, a Decision the Planner asks).
func TestBrowser(t *testing.T) {
	ui, err := filepath.Abs("../ui")
	if err != nil {
		t.Fatal(err)
	}
	// Skipped where the browser or the packages are missing, but never in
	// CI, which installs both: there a skip would hide the UI untested.
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		skip("no Chromium at %s (apt-get install chromium); .ci/run installs it", chromiumPath)
	}
	if _, err := os.Stat(filepath.Join(ui, "node_modules", "playwright-core")); err != nil {
		skip("ui/node_modules has no playwright-core (run `npm ci` in ui/); .ci/run does")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("no node on PATH")
	}

	ta := startApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "tests/browser.mjs", ta.app.NewLaunchURL())
	cmd.Dir = ui
	cmd.Stderr = &testLogWriter{t: t, prefix: "browser.mjs: "}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	steps := 0
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "@@ ")
		if !ok {
			t.Log(sc.Text())
			continue
		}
		var m struct {
			Step, Error, Ask, Channel, Text string
			OK                              bool
			MS                              int64
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("browser.mjs said %q: %v", line, err)
		}
		if m.Step != "" {
			steps++
			t.Run(m.Step, func(t *testing.T) {
				if !m.OK {
					t.Error(m.Error)
				} else {
					t.Logf("%d ms", m.MS)
				}
			})
			continue
		}
		reply, err := answerBrowser(ta, m.Ask, m.Channel, m.Text)
		if err != nil {
			reply = map[string]any{"error": err.Error()}
		}
		raw, _ := json.Marshal(reply)
		fmt.Fprintf(stdin, "%s\n", raw)
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("browser.mjs did not finish in time")
	}
	if err != nil {
		t.Errorf("browser.mjs: %v", err)
	}
	if steps < 12 {
		t.Errorf("browser.mjs ran %d steps, want at least 12", steps)
	}
}

// answerBrowser does for the script what only the server side can.
func answerBrowser(ta *testApp, ask, channelID, text string) (any, error) {
	switch ask {
	case "plan":
		var plan room.Plan
		r := ta.do("GET", "/api/channels/"+channelID+"/plan", nil)
		if r.Status != 200 {
			return nil, fmt.Errorf("GET plan: %d %s", r.Status, r.Body)
		}
		r.json(ta.t, &plan)
		return plan, nil
	case "append":
		var plan room.Plan
		ta.do("GET", "/api/channels/"+channelID+"/plan", nil).json(ta.t, &plan)
		r := ta.do("PUT", "/api/channels/"+channelID+"/plan", map[string]any{"revision": plan.Revision, "source": plan.Source + text})
		if r.Status != 200 {
			return nil, fmt.Errorf("PUT plan: %d %s", r.Status, r.Body)
		}
		return map[string]bool{"ok": true}, nil
	case "decisions":
		var list struct {
			Decisions []room.Decision `json:"decisions"`
		}
		ta.do("GET", "/api/channels/"+channelID+"/decisions", nil).json(ta.t, &list)
		return list, nil
	case "decision":
		// As the Planner's ask would: a questionnaire whose card lands in the plan.
		call, err := room.ParseQuestionCall([]byte(`{"method": "questionnaire", "params": {"questions": [
			{"question": "Which store?\nWe need **durability**.", "header": "Store", "options": [
				{"label": "SQLite", "description": "one file"}, {"label": "Postgres", "description": "a server"}]}]}}`))
		if err != nil {
			return nil, err
		}
		ch, err := ta.app.store.Channel(context.Background(), channelID)
		if err != nil {
			return nil, err
		}
		err = ta.app.hub.Do(context.Background(), ta.app.roomChannel(ch), func(r *room.Room) error {
			_, err := r.Ask(context.Background(), call, nil, nil)
			return err
		})
		return map[string]bool{"ok": true}, err
	}
	return nil, fmt.Errorf("unknown question %q", ask)
}

// testLogWriter sends a child's output to the test log, line by line.
type testLogWriter struct {
	t      *testing.T
	prefix string
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(w.prefix + line)
	}
	return len(p), nil
}
