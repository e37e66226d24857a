package agentconn_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// countingSink counts parts and signals when it has seen want of them.
type countingSink struct {
	n    atomic.Int64
	want int64
	done chan struct{}
	end  chan agentconn.TurnOutcome
}

func (s *countingSink) Part(wire.StreamPart) {
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
			if err := tr.Send(wire.StreamPart{Type: wire.PartTextDelta, ID: "t", Delta: "A sentence of about sixty bytes, as a model streams it. "}); err != nil {
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

// latencySink records how long each part took from the client's Send: the
// part's delta is the time it was sent, as a duration since start.
type latencySink struct {
	start time.Time
	lat   []time.Duration
	done  chan struct{}
	end   chan agentconn.TurnOutcome
}

func (s *latencySink) Part(p wire.StreamPart) {
	sent, _ := strconv.ParseInt(p.Delta, 10, 64)
	s.lat = append(s.lat, time.Since(s.start)-time.Duration(sent))
	if len(s.lat) == cap(s.lat) {
		close(s.done)
	}
}
func (s *latencySink) ToolCall(agentconn.ToolCallEvent) {}
func (s *latencySink) End(o agentconn.TurnOutcome)      { s.end <- o }

// BenchmarkPartLatency paces text-delta parts at 1,000 a second and reports
// the time from the client's Send to the host's sink, at the 50th and 99th
// percentiles. Run it with -benchtime 5000x or so: a percentile of a few
// parts says little.
func BenchmarkPartLatency(b *testing.B) {
	const every = time.Millisecond
	start := time.Now()
	h := newHarness(b)
	h.dial(b, client.Config{Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		next := time.Now()
		for i := 0; i < b.N; i++ {
			next = next.Add(every)
			time.Sleep(time.Until(next))
			sent := strconv.FormatInt(int64(time.Since(start)), 10)
			if err := tr.Send(wire.StreamPart{Type: wire.PartTextDelta, ID: "t", Delta: sent}); err != nil {
				return err
			}
		}
		return nil
	}}})
	s := &latencySink{start: start, lat: make([]time.Duration, 0, b.N), done: make(chan struct{}), end: make(chan agentconn.TurnOutcome, 1)}
	b.ResetTimer()
	if err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: s}); err != nil {
		b.Fatal(err)
	}
	<-s.done
	b.StopTimer()
	<-s.end
	slices.Sort(s.lat)
	at := func(q float64) float64 { return float64(s.lat[int(q*float64(len(s.lat)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(0, "ns/op") // the pace, not the cost
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
