package room

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"unicode/utf8"
)

// FuzzMemberFrames sends a member's socket any frame, after a plan:open, on a
// room with a plan: the room never panics, every frame it sends back is one
// JSON object with a string type, a request with an id is answered with
// that id, and the plan stays text its own version and journal agree on.

// frameConn is a member's connection that keeps what the room sent.
type frameConn struct {
	mu     sync.Mutex
	frames [][]byte
	closed int
}

func (c *frameConn) Send(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frames = append(c.frames, frame)
}

func (c *frameConn) Close(code int, _ string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = code
}

func FuzzMemberFrames(f *testing.F) {
	for _, s := range []string{
		`{"type":"plan:open","id":"o","epoch":"","version":0}`,
		`{"type":"plan:push","id":"p","version":1,"updates":[{"clientID":"c","changes":[9,[0,"x",""]]}]}`,
		`{"type":"plan:push","id":"p","version":1,"updates":[]}`,
		`{"type":"chat:send","id":"m","text":"hello"}`,
		`{"type":"chat:send","id":"m","text":""}`,
		`{"type":"decision:answer","id":"d","decision":"x","labels":["a"]}`,
		`{"type":"decision:cancel","id":"d","decision":"x"}`,
		`{"type":"nope"}`, `[]`, `{"type":1}`, `{"type":"plan:open","extra":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		ctx := context.Background()
		p := newMemPersister()
		h := NewHub(Options{Persister: p})
		defer h.Close()
		ch := Channel{ID: "doc", Title: "Fuzz", Slug: "fuzz", Repository: "octo/plans", URL: "/documents/octo/plans/fuzz"}
		if err := h.Do(ctx, ch, func(r *Room) error { _, err := r.ReplaceText(ctx, 0, "# Plan\n\nText.\n"); return err }); err != nil {
			t.Fatal(err)
		}
		conn := &frameConn{}
		m, err := h.Join(ctx, ch, Identity{Login: "ada", CanEdit: true, CanManage: true}, conn)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Leave()
		m.Receive(ctx, []byte(`{"type":"plan:open","id":"open","epoch":"","version":0}`))
		m.Receive(ctx, frame)

		var in struct {
			ID any `json:"id"`
		}
		id, _ := "", json.Unmarshal(frame, &in)
		if s, ok := in.ID.(string); ok {
			id = s
		}
		answered := id == ""
		conn.mu.Lock()
		frames := conn.frames
		conn.mu.Unlock()
		for _, fr := range frames {
			var out struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			}
			if err := json.Unmarshal(fr, &out); err != nil || out.Type == "" {
				t.Fatalf("sent %q", fr)
			}
			answered = answered || out.ID == id
		}
		if !answered {
			var env struct {
				Type string `json:"type"`
			}
			json.Unmarshal(frame, &env)
			// chat:send of a message that mentions no one is answered by ok;
			// every request is answered one way or another.
			t.Fatalf("a request with id %q (%s) got no answer: %q", id, env.Type, frames)
		}
		h.Do(ctx, ch, func(r *Room) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if !utf8.ValidString(r.plan.text) || r.plan.version < 1 {
				t.Fatalf("the plan is at version %d", r.plan.version)
			}
			return nil
		})
	})
}
