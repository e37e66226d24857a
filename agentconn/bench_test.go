package agentconn_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
)

// countingSink counts parts and signals when it has seen want of them.
type countingSink struct {
	n    atomic.Int64
	want int64
	done chan struct{}
	end  chan agentconn.TurnOutcome
}

func (s *countingSink) Part(agentconn.StreamPart) {
	if s.n.Add(1) == s.want {
		close(s.done)
	}
}
func (s *countingSink) ToolCall(agentconn.ToolCallEvent) {}
func (s *countingSink) End(o agentconn.TurnOutcome)      { s.end <- o }

// BenchmarkPartsThroughput streams text-delta parts from a client, through
// the server's decoder and link, into the fake host's sink.
func BenchmarkPartsThroughput(b *testing.B) {
	h := newHarness(b)
	h.dial(b, client.Config{Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		for i := 0; i < b.N; i++ {
			if err := tr.Send(agentconn.StreamPart{Type: agentconn.PartTextDelta, ID: "t", Delta: "A sentence of about sixty bytes, as a model streams it. "}); err != nil {
				return err
			}
		}
		return nil
	}}})
	s := &countingSink{want: int64(b.N), done: make(chan struct{}), end: make(chan agentconn.TurnOutcome, 1)}
	b.ResetTimer()
	start := time.Now()
	if err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: s}); err != nil {
		b.Fatal(err)
	}
	<-s.done
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "parts/s")
	<-s.end
}

// BenchmarkLinkMemory attaches b.N idle links, each to its own document, and
// reports the heap and goroutines each costs. Both ends live in this
// process, so the client's share is included: the server's alone is less.
func BenchmarkLinkMemory(b *testing.B) {
	h := newHarness(b)
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("m%d", i)
		h.host.docs[id] = agentconn.Document{ID: id, Title: id, Repository: "octo/score", URL: "http://x/" + id}
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.dial(b, client.Config{Document: fmt.Sprintf("m%d", i)})
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/float64(b.N), "heap-B/link")
	b.ReportMetric(float64(runtime.NumGoroutine()-g0)/float64(b.N), "goroutines/link")
}
