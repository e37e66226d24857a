package agentconn_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

func TestHTTPRefusals(t *testing.T) {
	h := newHarness(t)
	off := newHarness(t, func(o *agentconn.Options) { o.Disabled = true })
	upgrade := func(extra ...string) http.Header {
		hd := http.Header{
			"Connection":            {"Upgrade"},
			"Upgrade":               {"websocket"},
			"Sec-Websocket-Version": {"13"},
			"Sec-Websocket-Key":     {"dGhlIHNhbXBsZSBub25jZQ=="},
		}
		for i := 0; i+1 < len(extra); i += 2 {
			hd.Add(extra[i], extra[i+1])
		}
		return hd
	}
	const proto = "Sec-WebSocket-Protocol"
	// Tokens the host would accept, which the server refuses before asking it.
	paired, huge := "chopin_p_"+strings.Repeat("A", 43), strings.Repeat("a", 4097)
	h.host.set(func(f *fakeHost) { f.tokens[paired], f.tokens[huge] = "ana", "ana" })
	tests := []struct {
		name   string
		h      *harness
		header http.Header
		status int
		body   string
	}{
		{"off: any request", off, upgrade(proto, wire.Subprotocol, "Authorization", "Bearer tok-ana"), 404, ""},
		{"off: plain GET", off, http.Header{}, 404, ""},
		{"no subprotocol", h, upgrade("Authorization", "Bearer tok-ana"), 426,
			`{"code":"subprotocol-required","supported":["chopin.agent.v1"]}` + "\n"},
		{"another subprotocol", h, upgrade(proto, "chopin.agent.v2", "Authorization", "Bearer tok-ana"), 426,
			`{"code":"subprotocol-required","supported":["chopin.agent.v1"]}` + "\n"},
		{"plain HTTP", h, http.Header{proto: {wire.Subprotocol}, "Authorization": {"Bearer tok-ana"}}, 426,
			`{"code":"subprotocol-required","supported":["chopin.agent.v1"]}` + "\n"},
		{"426 before 403 and 401", h, upgrade("Origin", "http://evil.example"), 426, ""},
		{"foreign origin", h, upgrade(proto, wire.Subprotocol, "Origin", "http://evil.example", "Authorization", "Bearer tok-ana"), 403, ""},
		{"403 before 401", h, upgrade(proto, wire.Subprotocol, "Origin", "http://evil.example"), 403, ""},
		{"no bearer", h, upgrade(proto, wire.Subprotocol), 401, ""},
		{"not bearer", h, upgrade(proto, wire.Subprotocol, "Authorization", "Basic dG9rLWFuYQ=="), 401, ""},
		{"empty bearer", h, upgrade(proto, wire.Subprotocol, "Authorization", "Bearer "), 401, ""},
		{"malformed bearer", h, upgrade(proto, wire.Subprotocol, "Authorization", "Bearer tok ana"), 401, ""},
		{"unknown bearer", h, upgrade(proto, wire.Subprotocol, "Authorization", "Bearer tok-eve"), 401, ""},
		{"planner credential in local mode", h, upgrade(proto, wire.Subprotocol, "Authorization", "Bearer "+paired), 401, ""},
		{"bearer over 4096 bytes", h, upgrade(proto, wire.Subprotocol, "Authorization", "Bearer "+huge), 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", tt.h.url, nil)
			req.Header = tt.header
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, tt.status, body)
			}
			if tt.body != "" && string(body) != tt.body {
				t.Errorf("body = %q, want %q", body, tt.body)
			}
		})
	}
}

func TestUpgradeAnswersSubprotocol(t *testing.T) {
	h := newHarness(t)
	hd := http.Header{"Authorization": {"Bearer tok-ana"}, "Origin": {h.ts.URL}}
	d := websocket.Dialer{Subprotocols: []string{"chopin.agent.v0", wire.Subprotocol, "other"}}
	c, resp, err := d.Dial("ws"+strings.TrimPrefix(h.url, "http"), hd)
	if err != nil {
		t.Fatalf("dial with own origin and several subprotocols: %v", err)
	}
	defer c.Close()
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != wire.Subprotocol {
		t.Errorf("answered subprotocol %q", got)
	}
}

func TestFeatures(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		header string // "-" sends none
		want   string // the attached frame's tail
	}{
		{"-", `"repository":"octo/score","url":"http://127.0.0.1:8787/documents/doc1"}}`},
		{"", `"features":[]}`},
		{"session-forks, unknown-thing", `"features":["session-forks"]}`},
		{"unknown-thing", `"features":[]}`},
		{"steer-turn, capability-catalog", `"features":["capability-catalog","steer-turn"]}`},
		{"run-stage-deltas, decision-option-previews", `"features":["run-stage-deltas","decision-option-previews"]}`},
		{" bad name!,-x, run-stage-deltas ", `"features":["run-stage-deltas"]}`},
	}
	for _, tt := range tests {
		hd := http.Header{"Authorization": {"Bearer tok-ana"}}
		if tt.header != "-" {
			hd.Set(wire.FeaturesHeader, tt.header)
		}
		c := h.raw(t, hd)
		writeJSON(t, c, `{"type":"attach","version":1,"document":"doc1"}`)
		got := readFrame(t, c)
		if !strings.HasSuffix(got, tt.want) {
			t.Errorf("header %q: attached = %s, want it to end %s", tt.header, got, tt.want)
		}
		writeJSON(t, c, `{"type":"detach"}`)
		expectClose(t, c, "", 1000, "detached")
		h.srv.Reset("doc1") // skip the grace period for the next attach
	}
}

func TestAttachRefusals(t *testing.T) {
	h := newHarness(t)
	h.host.forbidden["cy"] = true
	h.host.tokens["tok-cy"] = "cy"
	tests := []struct {
		name   string
		token  string
		attach string
		frame  string
		code   int
		reason string
	}{
		{"version", "tok-ana", `{"type":"attach","version":2,"document":"doc1"}`,
			`{"type":"refused","code":"unsupported-version","message":"This server speaks version 1 of the agent connection (chopin.agent.v1), not version 2. Attach with version 1."}`, 4426, "unsupported-version"},
		{"no document", "tok-ana", `{"type":"attach","version":1,"document":"nope"}`,
			`{"type":"refused","code":"document-unavailable","message":"No document matches this id or URL, or it is being deleted. Check the document's URL in Chopin."}`, 4404, "document-unavailable"},
		{"archived", "tok-ana", `{"type":"attach","version":1,"document":"old"}`,
			`{"type":"refused","code":"document-archived","message":"This document is archived. Restore it in Chopin, then connect again."}`, 4404, "document-archived"},
		{"forbidden", "tok-cy", `{"type":"attach","version":1,"document":"doc1"}`,
			`{"type":"refused","code":"repository-forbidden","message":"cy cannot push to or administer octo/score, so it cannot be this document's Planner."}`, 4403, "repository-forbidden"},
		// The checks go in the spec's order: version, document, access.
		{"version before document", "tok-cy", `{"type":"attach","version":2,"document":"nope"}`,
			`{"type":"refused","code":"unsupported-version","message":"This server speaks version 1 of the agent connection (chopin.agent.v1), not version 2. Attach with version 1."}`, 4426, "unsupported-version"},
		{"document before access", "tok-cy", `{"type":"attach","version":1,"document":"nope"}`,
			`{"type":"refused","code":"document-unavailable","message":"No document matches this id or URL, or it is being deleted. Check the document's URL in Chopin."}`, 4404, "document-unavailable"},
		{"archived before access", "tok-cy", `{"type":"attach","version":1,"document":"old"}`,
			`{"type":"refused","code":"document-archived","message":"This document is archived. Restore it in Chopin, then connect again."}`, 4404, "document-archived"},
		{"not attach first", "tok-ana", `{"type":"detach"}`,
			`{"type":"error","code":"protocol","message":"The first message must be attach, and nothing else may be sent until attached or refused."}`, 1008, "protocol"},
		{"malformed attach", "tok-ana", `{"type":"attach","version":1}`,
			`{"type":"error","code":"malformed-message","message":"The message is malformed: attach: document is missing."}`, 1008, "malformed-message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := h.raw(t, http.Header{"Authorization": {"Bearer " + tt.token}})
			writeJSON(t, c, tt.attach)
			expectClose(t, c, tt.frame, tt.code, tt.reason)
		})
	}

	// A refused account takes nothing: the document is free for its Planner.
	t.Run("refused account", func(t *testing.T) {
		c := h.raw(t, http.Header{"Authorization": {"Bearer tok-cy"}})
		writeJSON(t, c, `{"type":"attach","version":1,"document":"doc1"}`)
		expectClose(t, c, `{"type":"refused","code":"repository-forbidden","message":"cy cannot push to or administer octo/score, so it cannot be this document's Planner."}`, 4403, "repository-forbidden")
		if st := h.srv.Status("doc1"); st.State != agentconn.PlannerNone {
			t.Errorf("after a refused attach: %+v", st)
		}
		l := h.dial(t, client.Config{})
		l.Detach(context.Background())
		h.waitStatus(t, "doc1", agentconn.PlannerGrace)
		h.srv.Reset("doc1")
	})

	t.Run("unavailable", func(t *testing.T) {
		h.host.set(func(f *fakeHost) { f.docErr = errors.New("disk on fire") })
		defer h.host.set(func(f *fakeHost) { f.docErr = nil })
		_, err := h.tryDial(client.Config{})
		var r *client.Refusal
		if !errors.As(err, &r) || r.Code != "unavailable" || !r.Retry || r.CloseCode != 1011 {
			t.Fatalf("err = %v, want unavailable with retry, 1011", err)
		}
		if r.Message != "Chopin could not check the document or the account just now. Try again." {
			t.Errorf("message = %q", r.Message)
		}
	})

	t.Run("by URL, then a second attach", func(t *testing.T) {
		c := h.raw(t, nil)
		writeJSON(t, c, `{"type":"attach","version":1,"document":"http://127.0.0.1:8787/documents/doc2","checkout":{"branch":"main"}}`)
		if got := readFrame(t, c); got != `{"type":"attached","version":1,"document":{"id":"doc2","title":"Second","repository":"octo/other","url":"http://127.0.0.1:8787/documents/doc2"}}` {
			t.Fatalf("attached = %s", got)
		}
		writeJSON(t, c, `{"type":"attach","version":1,"document":"doc2"}`)
		expectClose(t, c, `{"type":"error","code":"protocol","message":"This connection is already attached; attach is sent once."}`, 1008, "protocol")
	})
}

// TestAttachDeadline closes a socket that answers pings but never attaches:
// pongs keep it from being silent, so only the wait for attach can end it.
// (TestUnresponsive's "pongs keep a link alive" shows an attached link
// outliving the same deadline.)
func TestAttachDeadline(t *testing.T) {
	h := newHarness(t, func(o *agentconn.Options) {
		o.Ping, o.Timeout, o.MaxSilence = 10*time.Millisecond, 300*time.Millisecond, time.Hour
	})
	c := h.raw(t, nil)
	var pongs atomic.Int32
	c.SetPingHandler(func(data string) error {
		pongs.Add(1)
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	frames, code, reason := readClose(t, c) // reading answers pings
	if code != 1001 || reason != "unresponsive" || len(frames) != 0 {
		t.Errorf("close = %d %q after %q, want 1001 unresponsive and no message", code, reason, frames)
	}
	if pongs.Load() == 0 {
		t.Error("no ping was answered, so the close proves nothing about the attach deadline")
	}
}
