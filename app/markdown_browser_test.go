package app

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// TestBrowserMarkdown shows the pathological Markdown of ui/tests/corpus.mjs
// in a real Chromium (ui/tests/markdown-browser.mjs): for each input, a
// document whose plan holds it at 64 KiB between two ordinary blocks, and
// whose Chat holds it at 16,000 bytes between two ordinary messages. Every
// message and block around it must show, the input itself must show without
// the plain-text fallback, and the page must raise no error. The script
// prints each input's time to show Chat and the Preview and the page's JS
// heap after it, which this test logs (go test -v): a measure, not a limit.
// BenchmarkBrowserMarkdown does the same at the sizes' limits.
func TestBrowserMarkdown(t *testing.T) {
	ta, ui, node := startMarkdownBrowser(t)
	runMarkdownBrowser(t, ta, ui, node, 64, 16_000, func(step string, ok bool, msg string) {
		t.Run(step, func(t *testing.T) {
			if !ok {
				t.Error(msg)
			}
		})
	})
}

// BenchmarkBrowserMarkdown is TestBrowserMarkdown with each input at the
// most a plan (256 KiB) and a message (64 KiB) may hold; its table is the
// measurement:
//
//	go test ./app -run '^$' -bench BenchmarkBrowserMarkdown -benchtime 1x -v
func BenchmarkBrowserMarkdown(b *testing.B) {
	ta, ui, node := startMarkdownBrowser(b)
	for b.Loop() {
		runMarkdownBrowser(b, ta, ui, node, 256, 60_000, func(step string, ok bool, msg string) {
			if !ok {
				b.Errorf("%s: %s", step, msg)
			}
		})
	}
}

func startMarkdownBrowser(tb testing.TB) (ta *testApp, ui, node string) {
	if _, err := os.Stat(chromiumPath); err != nil {
		apptest.Missing(tb, "no Chromium at %s (apt-get install chromium); .ci/run installs it", chromiumPath)
	}
	ui, node = apptest.NodeTool(tb, "node", "playwright-core")
	ta = startApp(tb)
	ta.AddRepository("octo/markdown")
	return ta, ui, node
}

// runMarkdownBrowser runs the script with the plan's inputs at planKiB and
// the messages' at chatBytes, telling step of each input's result.
func runMarkdownBrowser(tb testing.TB, ta *testApp, ui, node string, planKiB, chatBytes int, step func(name string, ok bool, msg string)) {
	tb.Helper()
	// An input takes seconds; the limit only catches a tab that hangs.
	steps := nodeScript{args: []string{"tests/markdown-browser.mjs", ta.app.NewLaunchURL(), strconv.Itoa(planKiB), strconv.Itoa(chatBytes)},
		timeout: 8 * time.Minute,
		step: func(m scriptLine) {
			tb.Logf("%s: %d ms in all, seeding included", m.Step, m.MS)
			step(m.Step, m.OK, m.Error)
		},
		answer: func(m scriptLine) (any, error) {
			var q struct{ Text string }
			if err := m.decode(&q); err != nil {
				return nil, err
			}
			return seedMarkdownDocument(ta, m.Ask, q.Text)
		}}.run(tb, ui, node)
	if steps < 30 {
		tb.Errorf("markdown-browser.mjs ran %d steps, want one for each of the corpus's inputs, at least 30", steps)
	}
}

// seedMarkdownDocument makes the document the script asks for: its plan
// and its Chat messages, in order.
func seedMarkdownDocument(ta *testApp, ask, text string) (any, error) {
	if ask != "document" {
		return nil, fmt.Errorf("unknown question %q", ask)
	}
	var req struct {
		Title    string   `json:"title"`
		Plan     string   `json:"plan"`
		Messages []string `json:"messages"`
	}
	if err := json.Unmarshal([]byte(text), &req); err != nil {
		return nil, err
	}
	doc := ta.CreateDocument("octo/markdown", req.Title)
	var plan struct{ Revision int64 }
	ta.Do("GET", "/api/channels/"+doc.ID+"/plan", nil).JSON(ta.T, &plan)
	if r := ta.Do("PUT", "/api/channels/"+doc.ID+"/plan", map[string]any{"revision": plan.Revision, "source": req.Plan}); r.Status != 200 {
		return nil, fmt.Errorf("PUT plan: %d %s", r.Status, r.Body)
	}
	for _, m := range req.Messages {
		if r := ta.Do("POST", "/api/channels/"+doc.ID+"/messages", map[string]string{"text": m}); r.Status != 201 {
			return nil, fmt.Errorf("POST message: %d %s", r.Status, r.Body)
		}
	}
	return map[string]string{"id": doc.ID, "url": doc.URL}, nil
}
