package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// These tests hold the server process to a memory bound whatever an agent
// sends, measured as the system sees it: the peak resident set (VmHWM) of
// the running binary, read from /proc, not a counter inside it.

// peakRSS is the most memory the process has held resident, in bytes.
func (s *server) peakRSS(t testing.TB) int64 {
	t.Helper()
	return procStatus(t, s.cmd.Process.Pid, "VmHWM")
}

// procStatus reads one kB field of /proc/<pid>/status, in bytes.
func procStatus(t testing.TB, pid int, field string) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to measure the process: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// attachPlanner attaches an agent to a document with handler, as a Planner
// on the same computer does.
func (h *home) attachPlanner(origin, documentID string, handler client.Handler, features ...string) *client.Link {
	h.t.Helper()
	return h.attachPlannerVia(origin, origin, documentID, handler, features...)
}

// attachPlannerVia attaches through via, an address that forwards to origin.
func (h *home) attachPlannerVia(via, origin, documentID string, handler client.Handler, features ...string) *client.Link {
	h.t.Helper()
	token, err := os.ReadFile(filepath.Join(h.configDir, "agent-token"))
	if err != nil {
		h.t.Fatal(err)
	}
	// A Planner attached long enough is asked for the document's
	// description in an isolated session: answer it apart from the turns
	// a test scripts.
	scripted := handler.Turn
	handler.Turn = func(ctx context.Context, turn *client.Turn) error {
		if turn.Session.Mode == wire.ModeIsolated {
			return turn.Text(`{"description": "Plan under test"}`)
		}
		return scripted(ctx, turn)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: "ws" + strings.TrimPrefix(via, "http") + "/api/v1/agent",
		Header: http.Header{"Host": {strings.TrimPrefix(origin, "http://")}},
		Token:  strings.TrimSpace(string(token)), Document: documentID, Handler: handler, Features: features})
	if err != nil {
		h.t.Fatalf("attach: %v", err)
	}
	h.t.Cleanup(func() { l.Close() })
	return l
}

// plannerReply waits for the document's last Planner message to end and
// returns it as the messages route shows it.
func (h *home) plannerReply(origin, documentID string, within time.Duration) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var list struct{ Messages []map[string]any }
		h.api(origin, "GET", "/api/channels/"+documentID+"/messages", nil, &list)
		for i := len(list.Messages) - 1; i >= 0; i-- {
			if m := list.Messages[i]; m["role"] == "planner" && m["status"] != "streaming" {
				if m["cut"] != nil {
					m["text"] = h.wholeText(origin, documentID, m["id"].(string))
				}
				return m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("the reply in %s did not end within %v", documentID, within)
	return nil
}

// wholeText reads a long message's text page by page, as the UI's "Show
// more" does.
func (h *home) wholeText(origin, documentID, messageID string) string {
	h.t.Helper()
	var text strings.Builder
	for from := 0; ; {
		var page struct {
			Text string
			Next *int
		}
		h.api(origin, "GET", fmt.Sprintf("/api/channels/%s/messages/%s/text?from=%d", documentID, messageID, from), nil, &page)
		text.WriteString(page.Text)
		if page.Next == nil {
			return text.String()
		}
		from = *page.Next
	}
}

// flatPNG is a w×h PNG of one colour: a few kilobytes on the wire, w×h×4
// bytes once decoded.
func flatPNG(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.NRGBA{R: 1, A: 255})
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestToolImagesKeepMemoryBounded: sixteen agents each send a 7000×7000
// PNG from a tool at once. Each is decoded and stored as a smaller copy in
// its turn, one at a time, and the process stays under 300 MB.
func TestToolImagesKeepMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes sixteen 49-megapixel images (about 45 s)")
	}
	const agents, side, bound = 16, 7000, 300 << 20
	h := newHome(t)
	srv := h.start("serve")
	h.api(srv.origin, "POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil)
	data := base64.StdEncoding.EncodeToString(flatPNG(t, side, side))
	result, _ := json.Marshal(map[string]any{"content": []any{
		map[string]any{"type": "image", "data": data, "mimeType": "image/png", "alt": "A large grey square"}}})
	var docs []string
	for i := range agents {
		var ch channel
		h.api(srv.origin, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": fmt.Sprint("Images ", i)}, &ch)
		docs = append(docs, ch.ID)
		h.attachPlanner(srv.origin, ch.ID, client.Handler{Turn: func(ctx context.Context, turn *client.Turn) error {
			if err := turn.DeclareTools("draw"); err != nil {
				return err
			}
			if err := turn.Send(wire.StreamPart{Type: wire.PartToolCall, ToolCallID: "c1", ToolName: "draw", Input: "{}", ProviderExecuted: true}); err != nil {
				return err
			}
			return turn.Send(wire.StreamPart{Type: wire.PartToolResult, ToolCallID: "c1", ToolName: "draw", Result: result})
		}})
	}
	before := srv.peakRSS(t)
	var wg sync.WaitGroup
	for _, id := range docs {
		wg.Go(func() {
			h.api(srv.origin, "POST", "/api/channels/"+id+"/messages", map[string]string{"text": "@chopin draw"}, nil)
		})
	}
	wg.Wait()
	for _, id := range docs {
		m := h.plannerReply(srv.origin, id, 3*time.Minute)
		var details struct {
			Images []struct{ Width, Height int }
		}
		raw, _ := json.Marshal(m["details"])
		json.Unmarshal(raw, &details)
		if len(details.Images) != 1 || details.Images[0].Width != 2048 || details.Images[0].Height != 2048 {
			t.Errorf("%s: reply %s", id, raw)
		}
	}
	peak := srv.peakRSS(t)
	t.Logf("peak RSS %d MB (%d MB before the images)", peak>>20, before>>20)
	if peak > bound {
		t.Errorf("the process peaked at %d MB resident, over %d MB", peak>>20, bound>>20)
	}
}

// healthProbe asks /healthz every few milliseconds until stop, and returns
// how long each answer took.
func healthProbe(t testing.TB, origin string, stop <-chan struct{}) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		var took []time.Duration
		for {
			select {
			case <-stop:
				out <- took
				return
			case <-time.After(10 * time.Millisecond):
			}
			start := time.Now()
			resp, err := http.Get(origin + "/healthz")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			took = append(took, time.Since(start))
		}
	}()
	return out
}

// percentile is the p-th percentile of ds (0 < p <= 100).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

// TestLongTurnKeepsMemoryBounded: one turn calls read_plan 10,000 times on
// a 128 KiB plan and then streams 50 MB of text. The reply keeps its bound,
// the turn ends cleanly, and the process stays under 200 MB. How long
// /healthz took meanwhile is logged (docs/performance.md), not asserted.
func TestLongTurnKeepsMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a turn of 10,000 tool calls and 50 MB of text")
	}
	const calls, bound = 10_000, 200 << 20
	h := newHome(t)
	srv := h.start("serve")
	h.api(srv.origin, "POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil)
	var ch channel
	h.api(srv.origin, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "Long turn"}, &ch)
	var plan strings.Builder
	for i := 0; plan.Len() < 128<<10; i++ {
		fmt.Fprintf(&plan, "## Part %d\n\nThe plan says a little more about part %d here.\n\n", i, i)
	}
	if code := h.api(srv.origin, "PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 0, "source": plan.String()}, nil); code != 200 {
		t.Fatalf("PUT plan: %d", code)
	}
	chunk := strings.Repeat("Lorem ipsum dolor sit amet. ", 2_000_000/28)
	h.attachPlanner(srv.origin, ch.ID, client.Handler{Turn: func(ctx context.Context, turn *client.Turn) error {
		var wg sync.WaitGroup
		var next atomic.Int64
		for range 8 {
			wg.Go(func() {
				for next.Add(1) <= calls {
					if _, err := turn.CallTool(ctx, "read_plan", map[string]any{}); err != nil {
						t.Errorf("read_plan: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		for range 25 {
			if err := turn.Text(chunk); err != nil {
				return err
			}
		}
		return nil
	}})
	stop := make(chan struct{})
	probe := healthProbe(t, srv.origin, stop)
	h.api(srv.origin, "POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin read it all"}, nil)
	m := h.plannerReply(srv.origin, ch.ID, 5*time.Minute)
	close(stop)
	took := <-probe
	if m["status"] != "done" || !strings.Contains(m["text"].(string), "Chopin kept no more of this reply's text") {
		t.Errorf("reply %v: …%s", m["status"], m["text"].(string)[max(0, len(m["text"].(string))-300):])
	}
	peak := srv.peakRSS(t)
	t.Logf("peak RSS %d MB; /healthz p50 %v, p99 %v, max %v over %d probes", peak>>20,
		percentile(took, 50), percentile(took, 99), percentile(took, 100), len(took))
	if peak > bound {
		t.Errorf("the process peaked at %d MB resident, over %d MB", peak>>20, bound>>20)
	}
}

// stallingProxy forwards TCP connections to target; once stall is closed,
// it stops reading what the server sends, as a client that no longer reads
// would, while still passing on what the client sends, until resume is
// closed (a nil resume never is).
func stallingProxy(t testing.TB, target string, stall, resume <-chan struct{}) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { c.Close(); s.Close() })
			go func() { io.Copy(s, c); s.Close() }()
			go func() {
				buf := make([]byte, 32<<10)
				stalled := false
				for {
					if !stalled {
						select {
						case <-stall:
							stalled = true
							<-resume // leave the server's bytes unread until then
						default:
						}
					}
					s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
					n, err := s.Read(buf)
					if n > 0 {
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
						c.Close()
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSlowAgentReaderKeepsMemoryBounded: an agent that stops reading while
// it keeps calling read_plan on a 128 KiB plan, as fast as it can, fills its
// link's send queue, which holds it to its bound: the link is closed as
// unresponsive and the process stays under 64 MB: about 20 MB of an idle
// server, the spec's 16 MiB queue, and the collector's headroom over what
// is live, which the soft memory limit (memlimit.go) keeps small (it was
// 202 MB and growing with the rate of calls before host calls were bounded
// at once, and 67-80 MB before the limit).
func TestSlowAgentReaderKeepsMemoryBounded(t *testing.T) {
	const bound = 64 << 20
	h := newHome(t)
	srv := h.start("serve")
	h.api(srv.origin, "POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil)
	var ch channel
	h.api(srv.origin, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "Slow reader"}, &ch)
	var plan strings.Builder
	for i := 0; plan.Len() < 128<<10; i++ {
		fmt.Fprintf(&plan, "## Part %d\n\nThe plan says a little more about part %d here.\n\n", i, i)
	}
	h.api(srv.origin, "PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 0, "source": plan.String()}, nil)
	stall, resume := make(chan struct{}), make(chan struct{})
	proxy := "http://" + stallingProxy(t, strings.TrimPrefix(srv.origin, "http://"), stall, resume)
	sent, detached := make(chan struct{}), make(chan struct{})
	var l *client.Link
	l = h.attachPlannerVia(proxy, srv.origin, ch.ID, client.Handler{Turn: func(ctx context.Context, turn *client.Turn) error {
		close(stall)
		defer close(sent)
		for i := 0; ; i++ {
			select {
			case <-detached:
				return nil
			default:
			}
			err := l.Send(wire.HostToolCall{Session: turn.Session.ID, Turn: turn.ID(), ToolCallID: fmt.Sprint("c", i), ToolName: "read_plan", Input: "{}"})
			if err != nil {
				return nil // the link closed
			}
		}
	}})
	h.api(srv.origin, "POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin read"}, nil)
	// The client cannot hear the close through a stalled proxy; the
	// document shows it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var status struct{ State string }
		h.api(srv.origin, "GET", "/api/channels/"+ch.ID+"/planner", nil, &status)
		if status.State != "attached" {
			close(detached)
			<-sent
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the link to a client that does not read was not closed (peak RSS %d MB)", srv.peakRSS(t)>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
	peak := srv.peakRSS(t)
	t.Logf("peak RSS %d MB", peak>>20)
	if peak > bound {
		t.Errorf("the process peaked at %d MB resident, over %d MB", peak>>20, bound>>20)
	}
	// Reading again, the client gets what was on its way, then the close:
	// 1001 unresponsive, not a dropped socket. It reads again a while after
	// the close: longer than a close frame may take once it is its turn.
	time.Sleep(2 * time.Second)
	close(resume)
	select {
	case <-l.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the link did not end once the client read again")
	}
	if ce := l.Err(); ce == nil || ce.Code != 1001 || ce.Reason != "unresponsive" {
		t.Errorf("the link ended with %v, want 1001 unresponsive", ce)
	}
}
