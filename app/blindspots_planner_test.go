package app

// chopin planner's isolated turns and the checkout: a generated
// description's turn, whose prompt is the document's own text, is offered
// none of the checkout's tools and no word of the checkout, while a Chat
// turn of the same Planner is offered both.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// requestLog is an OpenAI-compatible model server that answers a request
// for JSON with a description and any other with a line of text, and keeps
// every request: its tool names and its system message.
type requestLog struct {
	ts *httptest.Server

	mu       sync.Mutex
	requests []loggedRequest
}

type loggedRequest struct {
	json   bool // it asked for a JSON answer: a description's turn
	tools  []string
	system string
}

func newRequestLog(t *testing.T) *requestLog {
	t.Helper()
	l := &requestLog{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
			Tools    []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
			ResponseFormat json.RawMessage `json:"response_format"`
		}
		raw := new(bytes.Buffer)
		raw.ReadFrom(r.Body)
		json.Unmarshal(raw.Bytes(), &req)
		lr := loggedRequest{json: len(req.ResponseFormat) > 0}
		for _, tool := range req.Tools {
			lr.tools = append(lr.tools, tool.Function.Name)
		}
		for _, m := range req.Messages {
			if m.Role == "system" {
				lr.system += m.Content
			}
		}
		l.mu.Lock()
		l.requests = append(l.requests, lr)
		l.mu.Unlock()
		if answerDescription(w, raw.Bytes()) {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Noted."},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})
	l.ts = httptest.NewServer(mux)
	t.Cleanup(l.ts.Close)
	return l
}

func (l *requestLog) all() []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedRequest(nil), l.requests...)
}

func TestPlannerIsolatedTurnReadsNoCheckout(t *testing.T) {
	ta := startAppWith(t, describeConfig(t, 50*time.Millisecond))
	dir := gitCheckout(t, "")
	if r := ta.Do("POST", "/api/repositories", map[string]any{"name": "octo/plans", "path": dir}); r.Status != http.StatusCreated {
		t.Fatalf("add repository: %d %s", r.Status, r.Body)
	}
	ch := ta.CreateDocument("octo/plans", "Launch")
	browser := ta.DialRoom(ch.ID)
	model := newRequestLog(t)
	env := ta.plannerEnv(nil)
	env["OPENAI_BASE_URL"] = model.ts.URL + "/v1"
	runPlanner(t, env, ta.app.URL()+ch.URL)
	ta.waitAttached(browser, ch.ID)

	if r := reply(browser, "m1", "@chopin note this"); r["text"] != "Noted." {
		t.Fatalf("the Chat turn: %v", r)
	}
	ta.putPlan(t, ch.ID, 0, "# Storage\n\nRead the code in cmd/ first.\n")
	eventually(t, "the description", func() bool { return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for the launch" })

	var chat, described int
	for _, r := range model.all() {
		hasCheckout := strings.Contains(r.system, "## The repository's code") || strings.Contains(r.system, dir)
		switch {
		case r.json:
			described++
			if len(r.tools) > 0 || hasCheckout {
				t.Errorf("a description's turn was offered tools %v, or the checkout: %q", r.tools, r.system)
			}
		default:
			chat++
			if !strings.Contains(strings.Join(r.tools, ","), "read_file") || !hasCheckout {
				t.Errorf("the Chat turn was offered tools %v without the checkout's", r.tools)
			}
		}
	}
	if chat == 0 || described == 0 {
		t.Errorf("%d Chat requests and %d description requests, want some of each", chat, described)
	}
	apptest.Want(t, ta.Do("GET", "/api/channels/"+ch.ID, nil), 200, "")
}
