package app

// BenchmarkPlannerChunks: parts per second from a Planner's streamed text
// into 10 browser sockets, for chopin planner --acp with the Node test agent
// (ui/tests/acp-agent.mjs, one agent_message_chunk per part) side by side
// with chopin planner on a fake OpenAI-compatible model server (one SSE
// chunk per part), in the same run. Each op is one part of one turn: the
// clock runs from the person's @chopin message until every socket has all
// of the turn's text.

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
)

const chunkBrowsers = 10

func BenchmarkPlannerChunks(b *testing.B) {
	b.Run("acp-node-agent", func(b *testing.B) {
		agent := nodeACPAgent(b)
		benchChunks(b, func(ta *testApp, doc string) *plannerCLI {
			return runPlanner(b, ta.plannerEnv(nil), append([]string{"--acp", "exec", doc, "--"}, agent...)...)
		})
	})
	b.Run("openai-fake-model", func(b *testing.B) {
		model := chunkModel(b)
		benchChunks(b, func(ta *testApp, doc string) *plannerCLI {
			env := ta.plannerEnv(nil)
			env["OPENAI_BASE_URL"] = model + "/v1"
			return runPlanner(b, env, doc, "--model", "bench")
		})
	})
}

// chunkModel is a model server whose answer to "bench N" is N chunks "x".
func chunkModel(b *testing.B) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"bench","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		body.ReadFrom(r.Body)
		var n int
		if i := bytes.LastIndex(body.Bytes(), []byte("bench ")); i >= 0 {
			fmt.Sscanf(body.String()[i+len("bench "):], "%d", &n)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := "data: " + `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}` + "\n\n"
		var out strings.Builder
		for range n {
			out.WriteString(chunk)
		}
		out.WriteString("data: " + `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
		w.Write([]byte(out.String()))
	})
	ts := httptest.NewServer(mux)
	b.Cleanup(ts.Close)
	return ts.URL
}

func benchChunks(b *testing.B, start func(ta *testApp, doc string) *plannerCLI) {
	ta := startApp(b)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Bench")
	watch := ta.DialRoom(ch.ID)
	cli := start(ta, ch.ID)
	defer func() { cli.cancel(); cli.wait(b) }()
	ta.waitAttached(watch, ch.ID)
	watch.Conn.Close()

	var counts [chunkBrowsers]int
	var mu sync.Mutex
	done := make(chan struct{}, chunkBrowsers)
	for i := range chunkBrowsers {
		rc := ta.DialRoom(ch.ID)
		rc.Conn.SetReadDeadline(time.Time{})
		go func(i int, conn *websocket.Conn) {
			for {
				_, frame, err := conn.ReadMessage()
				if err != nil {
					return
				}
				if !bytes.Contains(frame, deltaType) {
					continue
				}
				at := bytes.Index(frame, deltaText) + len(deltaText)
				n := bytes.Count(frame[at:at+bytes.IndexByte(frame[at:], '"')], []byte("x"))
				mu.Lock()
				counts[i] += n
				full := counts[i] == b.N
				mu.Unlock()
				if full {
					done <- struct{}{}
				}
			}
		}(i, rc.Conn)
	}
	b.ResetTimer()
	start0 := time.Now()
	apptest.Want(b, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": fmt.Sprintf("@chopin bench %d", b.N)}), http.StatusCreated, "")
	for range chunkBrowsers {
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			b.Fatalf("the browsers did not get %d parts: %v\n%s", b.N, counts, cli.stderr)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start0).Seconds(), "parts/s")
}

var (
	deltaType = []byte(`"type":"chat:delta"`)
	deltaText = []byte(`"delta":"`)
)
