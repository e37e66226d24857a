package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// These tests crash Chopin with SIGKILL, as a power cut or the OOM killer
// would, and check that what it acknowledged is there after a restart.

// api calls the running Chopin as a script does, with the agent token.
func (h *home) api(origin, method, path string, body any, out any) int {
	h.t.Helper()
	token, err := os.ReadFile(filepath.Join(h.configDir, "agent-token"))
	if err != nil {
		h.t.Fatal(err)
	}
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, origin+path, rd)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			h.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode
}

type channel struct {
	ID, Title, Slug string
	ArchivedAt      *string
}

func TestCrashKeepsTheCatalog(t *testing.T) {
	h := newHome(t)
	srv := h.start("serve")
	if code := h.api(srv.origin, "POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil); code != 201 {
		t.Fatalf("add repository: %d", code)
	}
	var created []channel
	for i := range 20 {
		var ch channel
		if code := h.api(srv.origin, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": fmt.Sprintf("Plan %02d ✓", i)}, &ch); code != 201 {
			t.Fatalf("create: %d", code)
		}
		created = append(created, ch)
	}
	h.api(srv.origin, "PATCH", "/api/channels/"+created[0].ID, map[string]string{"title": "Renamed"}, nil)
	h.api(srv.origin, "POST", "/api/channels/"+created[1].ID+"/archive", nil, nil)
	srv.kill9(t)

	srv = h.start("serve") // the lock of the killed process is recovered
	var page struct{ Channels []channel }
	h.api(srv.origin, "GET", "/api/repositories/octo/plans/channels?includeArchived=true&limit=100", nil, &page)
	if len(page.Channels) != 20 {
		t.Fatalf("after the crash: %d documents, want 20", len(page.Channels))
	}
	var renamed, archived channel
	h.api(srv.origin, "GET", "/api/repositories/octo/plans/documents/"+url.PathEscape(created[0].Slug), nil, &renamed)
	h.api(srv.origin, "GET", "/api/channels/"+created[1].ID, nil, &archived)
	if renamed.Title != "Renamed" || archived.ArchivedAt == nil {
		t.Errorf("after the crash: renamed %+v, archived %+v", renamed, archived)
	}
}

// checkpointEvery is how many updates the room lets follow a checkpoint
// before it writes the next one (room/plan.go).
const checkpointEvery = 200

// TestCrashKeepsAcknowledgedEdits pushes edits back to back through
// several checkpoints and kills Chopin at random points: after a random
// acknowledgement, or the moment an update that makes a checkpoint is
// published (its checkpoint is written right after). After
// each restart every acknowledged edit is there, in order, and nothing
// else. The seed is logged; CHOPIN_CRASH_SEED repeats a run.
func TestCrashKeepsAcknowledgedEdits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("CHOPIN_CRASH_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (CHOPIN_CRASH_SEED repeats it)", seed)
	r := rand.New(rand.NewPCG(seed, 0))

	h := newHome(t)
	srv := h.start("serve")
	h.api(srv.origin, "POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil)
	var ch channel
	h.api(srv.origin, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "Crash"}, &ch)
	const title = "# Crash\n"
	want := func(version int) string {
		var b strings.Builder
		b.WriteString(title)
		for i := range version {
			fmt.Fprintf(&b, "edit %04d\n", i)
		}
		return b.String()
	}

	version, checkpoints, round := 0, 0, 0
	for ; version < 4*checkpointEvery+50; round++ {
		conn := dialRoom(t, h, srv.origin, ch.ID)
		conn.WriteJSON(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
		var text string
		for text == "" {
			var m map[string]any
			if err := conn.ReadJSON(&m); err != nil {
				t.Fatal(err)
			}
			if m["type"] == "plan:snapshot" {
				text, version = m["source"].(string), int(m["version"].(float64))
			}
		}
		if text != want(version) {
			t.Fatalf("round %d: the plan at version %d is\n%q\nwant\n%q", round, version, text, want(version))
		}

		// Push edits, each at the version the previous one will make. Kill
		// at the next checkpoint's publication every other round, else after
		// a random acknowledgement.
		pushes := checkpointEvery + 100
		nextCheckpoint := (version/checkpointEvery + 1) * checkpointEvery
		atCheckpoint := round%2 == 1
		killAfter := 1 + r.IntN(pushes-1)
		length := len(text) // ASCII: UTF-16 length is the byte length
		go func(from int) {
			for i := range pushes {
				line := fmt.Sprintf("edit %04d", from+i)
				if conn.WriteJSON(map[string]any{"type": "plan:push", "id": fmt.Sprint(i), "version": from + i,
					"updates": []any{map[string]any{"clientID": "crash", "changes": []any{length, []any{0, line, ""}}}}}) != nil {
					return
				}
				length += len(line) + 1
			}
		}(version)
		acked := version
		for {
			var m map[string]any
			if err := conn.ReadJSON(&m); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if m["type"] == "error" {
				t.Fatalf("round %d: push refused: %v", round, m)
			}
			if atCheckpoint && m["type"] == "plan:updates" && int(m["version"].(float64))+1 == nextCheckpoint {
				checkpoints++
				break
			}
			if m["type"] == "plan:ack" {
				acked = int(m["version"].(float64))
				if !atCheckpoint && acked-version >= killAfter {
					break
				}
			}
		}
		srv.kill9(t)
		srv = h.start("serve")

		var plan struct {
			Source  string
			Version int
		}
		h.api(srv.origin, "GET", "/api/channels/"+ch.ID+"/plan", nil, &plan)
		if plan.Version < acked {
			t.Fatalf("round %d: after the crash the plan is at version %d; edits up to %d were acknowledged", round, plan.Version, acked)
		}
		if plan.Source != want(plan.Version) {
			t.Fatalf("round %d: after the crash at version %d:\n%q\nwant the first %d edits", round, plan.Version, plan.Source, plan.Version)
		}
		version = plan.Version
	}
	t.Logf("%d crashes, %d of them as a checkpoint was written, up to version %d", round, checkpoints, version)
	if checkpoints < 2 {
		t.Errorf("killed at %d checkpoints", checkpoints)
	}
}

// dialRoom signs a browser in through a launch link and opens the room socket.
func dialRoom(t *testing.T, h *home, origin, channelID string) *websocket.Conn {
	var link struct{ URL string }
	h.api(origin, "POST", "/api/launch-links", nil, &link)
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(origin)
	header := http.Header{"Origin": {origin}}
	for _, c := range jar.Cookies(u) {
		header.Add("Cookie", c.String())
	}
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(origin, "http")+"/ws?channel="+channelID, header)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	return conn
}
