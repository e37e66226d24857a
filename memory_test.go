package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	token, err := os.ReadFile(filepath.Join(h.configDir, "agent-token"))
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	l, err := client.Dial(ctx, client.Config{URL: "ws" + strings.TrimPrefix(origin, "http") + "/api/v1/agent",
		Token: strings.TrimSpace(string(token)), Document: documentID, Handler: handler, Features: features})
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
				return m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("the reply in %s did not end within %v", documentID, within)
	return nil
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
