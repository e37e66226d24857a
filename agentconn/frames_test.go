package agentconn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

func TestFrameRefusals(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name   string
		send   func(c *websocket.Conn) error
		frame  string
		code   int
		reason string
	}{
		{"over 2 MiB", func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.TextMessage, []byte(`{"type":"detach","pad":"`+strings.Repeat("x", wire.MaxFrameBytes)+`"}`))
		}, `{"type":"error","code":"message-too-large","message":"A frame may hold at most 2 MiB (2,097,152 bytes) of UTF-8; this one was larger."}`, 1009, "message-too-large"},
		{"binary", func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.BinaryMessage, []byte(`{"type":"detach"}`))
		}, `{"type":"error","code":"malformed-message","message":"Binary frames are refused: send one JSON object per text frame."}`, 1008, "malformed-message"},
		{"unlisted field", func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.TextMessage, []byte(`{"type":"input-cancel","request":"r","why":"x"}`))
		}, `{"type":"error","code":"malformed-message","message":"The message is malformed: input-cancel: why is not a field of this message."}`, 1008, "malformed-message"},
		{"not UTF-8", func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.TextMessage, []byte("{\"type\":\"detach\",\"x\":\"\xff\xfe\"}"))
		}, `{"type":"error","code":"malformed-message","message":"The message is malformed: the frame is not valid UTF-8 (byte 22 is 0xFF)."}`, 1008, "malformed-message"},
		{"not JSON", func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.TextMessage, []byte(`hello`))
		}, `{"type":"error","code":"malformed-message","message":"The message is malformed: the frame is not one JSON value."}`, 1008, "malformed-message"},
		{"unoffered feature", func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.TextMessage, []byte(`{"type":"input-received","request":"r"}`))
		}, `{"type":"error","code":"protocol","message":"input-received belongs to a feature this connection did not ask for, or this server does not offer."}`, 1008, "protocol"},
		{"delta card without the feature", func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.TextMessage, []byte(`{"type":"runs","session":"s","active":[],"paused":[],"cards":[{"id":"r","name":"n","status":"running","started":0,"updated":0,"stagesDelta":true,"stages":[],"waiting":0}]}`))
		}, `{"type":"error","code":"malformed-message","message":"A delta run card (stagesDelta) needs the run-stage-deltas feature, which this connection did not ask for."}`, 1008, "malformed-message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := h.rawAttached(t)
			if err := tt.send(c); err != nil {
				t.Fatal(err)
			}
			expectClose(t, c, tt.frame, tt.code, tt.reason)
			h.waitStatus(t, "doc1", agentconn.PlannerGrace)
			h.srv.Reset("doc1")
		})
	}
}

func TestFrameAtTheLimit(t *testing.T) {
	h := newHarness(t)
	c := h.rawAttached(t)
	// A frame of exactly 2 MiB is accepted: a message for an unknown
	// session, which is ignored, padded to the limit.
	head, tail := `{"type":"part","session":"s","turn":"t","part":{"type":"text-delta","id":"a","delta":"`, `"}}`
	frame := head + strings.Repeat("x", wire.MaxFrameBytes-len(head)-len(tail)) + tail
	writeJSON(t, c, frame)
	writeJSON(t, c, `{"type":"detach"}`)
	expectClose(t, c, "", 1000, "detached")
}

func TestPings(t *testing.T) {
	h := newHarness(t, func(o *agentconn.Options) { o.Ping = 10 * time.Millisecond })
	c := h.rawAttached(t)
	var pings atomic.Int32
	c.SetPingHandler(func(data string) error {
		pings.Add(1)
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(wait)
	for pings.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("got %d pings", pings.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestUnresponsive(t *testing.T) {
	// limit is the timeout or longest silence under test. Shorter ones close
	// links before a loaded machine (or -race) has finished attaching them,
	// or between two pongs of a client that does answer.
	const limit = time.Second
	t.Run("timeout: a client that stopped reading and answering", func(t *testing.T) {
		h := newHarness(t, func(o *agentconn.Options) {
			o.Ping, o.Timeout, o.MaxSilence = 10*time.Millisecond, limit, time.Hour
		})
		c := h.rawAttached(t)
		h.waitStatus(t, "doc1", agentconn.PlannerGrace) // closed without our reading anything
		c.SetPingHandler(func(string) error { return nil })
		_, code, reason := readClose(t, c)
		if code != 1001 || reason != "unresponsive" {
			t.Errorf("close = %d %q", code, reason)
		}
	})
	t.Run("longest silence: a client that reads but never sends", func(t *testing.T) {
		h := newHarness(t, func(o *agentconn.Options) {
			o.Ping, o.Timeout, o.MaxSilence = 10*time.Millisecond, time.Hour, limit
		})
		c := h.rawAttached(t)
		c.SetPingHandler(func(string) error { return nil }) // no pongs
		frames, code, reason := readClose(t, c)
		if code != 1001 || reason != "unresponsive" || len(frames) != 0 {
			t.Errorf("close = %d %q after %q", code, reason, frames)
		}
	})
	t.Run("longest silence: frames flow to a client that never sends", func(t *testing.T) {
		h := newHarness(t, func(o *agentconn.Options) {
			o.Ping, o.Timeout, o.MaxSilence = 10*time.Millisecond, time.Hour, limit
		})
		c := h.raw(t, http.Header{"Authorization": {"Bearer tok-ana"}, wire.FeaturesHeader: {wire.FeatureSteerTurn}})
		writeJSON(t, c, `{"type":"attach","version":1,"document":"doc1"}`)
		if got := readFrame(t, c); !strings.HasPrefix(got, `{"type":"attached"`) {
			t.Fatalf("attach answered %s", got)
		}
		startRawTurn(t, h, c, newSink())
		c.SetPingHandler(func(string) error { return nil }) // no pongs
		// The server keeps sending (steer requests nobody answers), and the
		// client keeps reading: a draining queue is not hearing from it.
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					go h.srv.Steer(context.Background(), "doc1", "@ana: more")
				}
			}
		}()
		frames, code, reason := readClose(t, c)
		if code != 1001 || reason != "unresponsive" {
			t.Errorf("close = %d %q", code, reason)
		}
		if len(frames) < 2 || !strings.HasPrefix(frames[0], `{"type":"steer"`) {
			t.Errorf("frames before the close: %d, first %.40q", len(frames), frames)
		}
	})
	t.Run("pongs keep a link alive", func(t *testing.T) {
		h := newHarness(t, func(o *agentconn.Options) {
			o.Ping, o.Timeout, o.MaxSilence = 10*time.Millisecond, limit, time.Hour
		})
		c := h.rawAttached(t)
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		}()
		// A link attached after it that does not answer is closed as
		// unresponsive: by then this one's deadline has passed too.
		quiet := h.raw(t, http.Header{"Authorization": {"Bearer tok-bo"}})
		writeJSON(t, quiet, `{"type":"attach","version":1,"document":"doc2"}`)
		if got := readFrame(t, quiet); !strings.HasPrefix(got, `{"type":"attached"`) {
			t.Fatalf("attach answered %s", got)
		}
		h.waitStatus(t, "doc2", agentconn.PlannerGrace)
		if st := h.srv.Status("doc1"); st.State != agentconn.PlannerAttached {
			t.Fatalf("a link answering pings was closed: %+v", st)
		}
	})
	t.Run("a full queue: a client that reads again hears the close", func(t *testing.T) {
		h := newHarness(t)
		c := fillQueue(t, h)
		// A while after the link closed (longer than a close frame may take
		// to write once it is its turn),
		time.Sleep(2 * time.Second)
		// reading again, it gets what was already on its way, the frame
		// being written when the queue overflowed whole, then the close:
		// what was queued behind it was dropped.
		frames, code, reason := readClose(t, c)
		if code != 1001 || reason != "unresponsive" {
			t.Errorf("close = %d %q after %d frames", code, reason, len(frames))
		}
	})
	t.Run("a full queue: a client that never reads again is dropped", func(t *testing.T) {
		h := newHarness(t, func(o *agentconn.Options) { o.Timeout = limit })
		fillQueue(t, h)
		deadline := time.Now().Add(wait)
		for agentconn.OpenLinks(h.srv) != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the socket of a client that does not read stayed open")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// fillQueue attaches a raw client that calls read_plan over and over
// without reading the results, until the socket's buffers and then the
// link's queue fill and the link is closed.
func fillQueue(t *testing.T, h *harness) *websocket.Conn {
	t.Helper()
	// Results smaller than the queue: it overflows once the socket's
	// buffers are full and a write is blocked.
	agentconn.SetMaxQueue(h.srv, 256<<10)
	big := json.RawMessage(`"` + strings.Repeat("y", 64<<10) + `"`)
	h.host.tools["read_plan"] = func(_ context.Context, _ agentconn.ToolCall) (json.RawMessage, error) { return big, nil }
	c := h.rawAttached(t)
	s := newSink()
	session, turn := startRawTurn(t, h, c, s, wire.Tool{Name: "read_plan"})
	for i := 0; ; i++ {
		frame := fmt.Sprintf(`{"type":"host-tool-call","session":%q,"turn":%q,"toolCallId":"c%d","toolName":"read_plan","input":"{}"}`, session, turn, i)
		if c.WriteMessage(websocket.TextMessage, []byte(frame)) != nil {
			break
		}
		if h.srv.Status("doc1").State != agentconn.PlannerAttached {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, o := s.until(t); o.Status != "failed" {
		t.Errorf("turn = %+v", o)
	}
	h.waitStatus(t, "doc1", agentconn.PlannerGrace)
	return c
}

// startRawTurn starts a turn on a raw link and answers its start.
func startRawTurn(t *testing.T, h *harness, c *websocket.Conn, s *sink, tools ...wire.Tool) (session, turn string) {
	t.Helper()
	if err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "@ana: go", Tools: tools, Sink: s}); err != nil {
		t.Fatal(err)
	}
	var start wire.Start
	decodeServer(t, readFrame(t, c), &start)
	writeJSON(t, c, `{"type":"started","session":"`+start.Session+`"}`)
	var tm wire.Turn
	decodeServer(t, readFrame(t, c), &tm)
	return tm.Session, tm.Turn
}

// decodeServer decodes a server frame strictly into the message type v points to.
func decodeServer[M wire.Message](t *testing.T, frame string, v *M) {
	t.Helper()
	m, err := wire.DecodeServerFrame([]byte(frame))
	if err != nil {
		t.Fatalf("decode %s: %v", frame, err)
	}
	got, ok := m.(M)
	if !ok {
		t.Fatalf("got %s, want %T", frame, *v)
	}
	*v = got
}
