package plannerhost_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
)

// Issue 4's streaming benchmarks: text-delta parts from one agent client to
// ten open browser sockets, through the real app on port 0.
//
//	go test ./plannerhost -run '^$' -bench BenchmarkAgentDeltas -benchtime 3000x
//
// parts/s is end to end: from the first part leaving the agent until every
// browser has the last. The agent keeps at most deltaWindow parts ahead of
// the slowest browser, as a flow-controlled client would, so the number
// measures the pipeline, not how many frames the send queues hold before
// they drop a tab. p99-ms is the 99th percentile, over every part and every
// browser, of the time from a part leaving the agent to its arrival in a
// browser socket, with the agent sending 1,000 parts a second. Each is
// measured beside a bare gorilla/websocket relay (apptest.Relay) carrying
// the same parts to the same ten readers, in the same run.

const (
	benchBrowsers = 10
	deltaWindow   = 256
)

func BenchmarkAgentDeltas(b *testing.B) {
	b.Run("throughput", func(b *testing.B) {
		app, relay := newDeltaBench(b), newRelayDeltaBench(b)
		b.ResetTimer()
		for _, s := range []*deltaBench{app, relay} {
			start := time.Now()
			for i := range b.N {
				for int64(i)-s.slowest() >= deltaWindow {
					time.Sleep(20 * time.Microsecond)
				}
				s.send(b, "x")
			}
			s.waitAll(b, int64(b.N))
			s.rate = float64(b.N) / time.Since(start).Seconds()
		}
		b.ReportMetric(app.rate, "parts/s")
		b.ReportMetric(relay.rate, "relay-parts/s")
		b.ReportMetric(app.rate/relay.rate, "ratio")
		app.finish(b)
	})
	b.Run("latency-1000ps", func(b *testing.B) {
		// Each tick sends one part through the app and one through the
		// relay: both streams at 1,000 parts a second, in the same run.
		app, relay := newDeltaBench(b), newRelayDeltaBench(b)
		app.stamped, relay.stamped = true, true
		b.ResetTimer()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for range b.N {
			<-tick.C
			app.send(b, strconv.FormatInt(time.Now().UnixNano(), 10)+" ")
			relay.send(b, strconv.FormatInt(time.Now().UnixNano(), 10)+" ")
		}
		app.waitAll(b, int64(b.N))
		relay.waitAll(b, int64(b.N))
		b.StopTimer()
		p := func(s *deltaBench, q float64) float64 {
			lat := s.latencies()
			slices.Sort(lat)
			return float64(lat[int(q*float64(len(lat)-1))]) / 1e6
		}
		b.ReportMetric(p(app, 0.50), "p50-ms")
		b.ReportMetric(p(app, 0.99), "p99-ms")
		b.ReportMetric(p(app, 1), "max-ms")
		b.ReportMetric(p(relay, 0.50), "relay-p50-ms")
		b.ReportMetric(p(relay, 0.99), "relay-p99-ms")
		b.ReportMetric(p(app, 0.50)/p(relay, 0.50), "ratio-p50")
		app.finish(b)
	})
}

// newRelayDeltaBench is the baseline: the same ten browser readers on a
// bare gorilla/websocket relay that sends each frame from one socket, as
// it is, to the others. The "agent" sends frames shaped as chat:delta.
func newRelayDeltaBench(b *testing.B) *deltaBench {
	relay := apptest.NewRelay(b, filepath.Join(b.TempDir(), "relay.db"))
	s := &deltaBench{}
	for range benchBrowsers {
		s.browsers = append(s.browsers, &deltaReader{conn: relay.Dial(b, "/fanout")})
	}
	agent := relay.Dial(b, "/fanout")
	s.sendFrame = func(delta string) error {
		frame, _ := json.Marshal(map[string]string{"type": "chat:delta", "delta": delta})
		return agent.WriteMessage(websocket.TextMessage, frame)
	}
	for _, r := range s.browsers {
		go r.read(s)
	}
	return s
}

type deltaBench struct {
	ta        *testApp
	turn      *testTurn
	sendFrame func(delta string) error // the relay's agent; nil for the app
	browsers  []*deltaReader
	stamped   bool
	rate      float64 // parts/s measured
}

type deltaReader struct {
	conn  *websocket.Conn
	count atomic.Int64
	mu    sync.Mutex
	lat   []time.Duration
}

func newDeltaBench(b *testing.B) *deltaBench {
	ta := startApp(b)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Bench")
	s := &deltaBench{ta: ta}
	for range benchBrowsers {
		rc := ta.DialRoom(ch.ID)
		rc.Conn.SetReadDeadline(time.Time{}) // dialRoom's wait is over
		s.browsers = append(s.browsers, &deltaReader{conn: rc.Conn})
	}
	ts := newTurns()
	ta.attach(ch.ID, ts.handler())
	apptest.Want(b, ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	s.turn = ts.next(b)
	if err := s.turn.Send(wire.StreamPart{Type: wire.PartTextStart, ID: "t"}); err != nil {
		b.Fatal(err)
	}
	for _, r := range s.browsers {
		go r.read(s)
	}
	return s
}

var deltaMarker = []byte(`"type":"chat:delta"`)
var deltaField = []byte(`"delta":"`)

// read counts the parts a browser receives, and their latency when each
// part's delta is its send time. A chat:delta frame may carry several
// parts: "x" each for throughput, "<unix ns> " each for latency.
func (r *deltaReader) read(s *deltaBench) {
	for {
		_, frame, err := r.conn.ReadMessage()
		if err != nil {
			return
		}
		if !bytes.Contains(frame, deltaMarker) {
			continue
		}
		now := time.Now().UnixNano()
		i := bytes.Index(frame, deltaField) + len(deltaField)
		delta := frame[i : i+bytes.IndexByte(frame[i:], '"')]
		if !s.stamped {
			r.count.Add(int64(len(delta)))
			continue
		}
		for _, stamp := range bytes.Fields(delta) {
			if sent, err := strconv.ParseInt(string(stamp), 10, 64); err == nil {
				r.mu.Lock()
				r.lat = append(r.lat, time.Duration(now-sent))
				r.mu.Unlock()
				r.count.Add(1)
			}
		}
	}
}

func (s *deltaBench) send(b *testing.B, delta string) {
	if s.sendFrame != nil {
		if err := s.sendFrame(delta); err != nil {
			b.Fatal(err)
		}
		return
	}
	if err := s.turn.Send(wire.StreamPart{Type: wire.PartTextDelta, ID: "t", Delta: delta}); err != nil {
		b.Fatal(err)
	}
}

func (s *deltaBench) slowest() int64 {
	least := int64(-1)
	for _, r := range s.browsers {
		if n := r.count.Load(); least < 0 || n < least {
			least = n
		}
	}
	return least
}

func (s *deltaBench) waitAll(b *testing.B, n int64) {
	deadline := time.Now().Add(time.Minute)
	for s.slowest() < n {
		if time.Now().After(deadline) {
			var got []int64
			for _, r := range s.browsers {
				got = append(got, r.count.Load())
			}
			b.Fatalf("browsers got %v of %d parts", got, n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func (s *deltaBench) latencies() []time.Duration {
	var all []time.Duration
	for _, r := range s.browsers {
		r.mu.Lock()
		all = append(all, r.lat...)
		r.mu.Unlock()
	}
	return all
}

func (s *deltaBench) finish(b *testing.B) {
	s.turn.done <- nil
}
