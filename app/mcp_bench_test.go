package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkMCPSessionsWithoutDelete is a client that initializes and never
// ends its session, 23,000 times over one keep-alive connection: the memory
// the process holds afterwards, and the sessions still alive. Run it once:
//
//	go test -run '^$' -bench MCPSessionsWithoutDelete -benchtime 1x ./app
func BenchmarkMCPSessionsWithoutDelete(b *testing.B) {
	const sessions = 23_000
	ta := startApp(b)
	client := &http.Client{}
	initialize := func() {
		req, _ := http.NewRequest("POST", ta.URL()+"/mcp", strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+ta.Token())
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("initialize: %d", res.StatusCode)
		}
	}
	initialize() // the MCP server is built on the first request
	for b.Loop() {
		held, rss := heldMemory(), processRSS()
		start := time.Now()
		for range sessions {
			initialize()
		}
		took := time.Since(start)
		b.ReportMetric(float64(heldMemory()-held)/(1<<20), "MB-held-growth")
		b.ReportMetric(float64(processRSS()-rss)/(1<<20), "MB-RSS-growth")
		b.ReportMetric(float64(ta.app.mcp().LiveSessions()), "sessions-live")
		b.ReportMetric(float64(took.Microseconds())/sessions, "µs/initialize")
	}
}
