package agentconn_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// opened is how a session of a forking client was opened, and its turn.
type opened struct {
	session string
	from    *wire.ForkFrom // nil: opened with start
	turn    wire.Turn
}

// forkClient attaches a client that records how each session opened and
// fails a turn whose prompt is "fail". refuse makes it refuse every fork.
func forkClient(t *testing.T, h *harness, features []string, refuse bool) (*client.Link, chan opened, chan wire.ForkFrom) {
	t.Helper()
	got := make(chan opened, 16)
	refused := make(chan wire.ForkFrom, 16)
	var mu sync.Mutex
	froms := map[string]*wire.ForkFrom{}
	l := h.dial(t, client.Config{Features: features, Handler: client.Handler{
		Fork: func(s *client.Session, from wire.ForkFrom) error {
			if refuse {
				refused <- from
				return errors.New("The source session is no longer held.")
			}
			mu.Lock()
			froms[s.ID] = &from
			mu.Unlock()
			return nil
		},
		Turn: func(_ context.Context, tr *client.Turn) error {
			mu.Lock()
			from := froms[tr.Session.ID]
			mu.Unlock()
			got <- opened{session: tr.Session.ID, from: from, turn: tr.Message}
			if tr.Prompt() == "fail" {
				return errors.New("the model is down")
			}
			return nil
		},
	}})
	return l, got, refused
}

// turnOn runs one Chat-thread turn to its end and returns how it opened.
func turnOn(t *testing.T, h *harness, got chan opened, prompt string) (opened, agentconn.TurnOutcome) {
	t.Helper()
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: prompt, Thread: "chat",
		Instructions: "system and conversation", ForkInstructions: "system", Sink: s}))
	o := recv(t, got)
	_, out := s.until(t)
	return o, out
}

// With session-forks, a thread's next turn forks from its last finished turn.
func TestForkSent(t *testing.T) {
	h := newHarness(t)
	l, got, _ := forkClient(t, h, []string{"session-forks"}, false)
	if !l.Has("session-forks") {
		t.Fatal("session-forks not granted")
	}
	first, out := turnOn(t, h, got, "one")
	if first.from != nil || first.turn.Instructions != "system and conversation" || out.Status != "finished" {
		t.Fatalf("first turn %+v, %+v", first, out)
	}
	second, _ := turnOn(t, h, got, "two")
	want := wire.ForkFrom{Session: first.session, Turn: first.turn.Turn}
	if second.from == nil || *second.from != want || second.session == first.session {
		t.Fatalf("second turn opened %+v, want a fork from %+v", second, want)
	}
	if second.turn.Instructions != "system" {
		t.Fatalf("a forked session's instructions = %q", second.turn.Instructions)
	}
	// A failed turn records no fork point: the next forks from the last finished one.
	failed, out := turnOn(t, h, got, "fail")
	if out.Status != "failed" || failed.from == nil || failed.from.Session != second.session {
		t.Fatalf("failing turn %+v, %+v", failed, out)
	}
	retry, _ := turnOn(t, h, got, "again")
	if retry.from == nil || *retry.from != (wire.ForkFrom{Session: second.session, Turn: second.turn.Turn}) {
		t.Fatalf("turn after a failure forked from %+v, want %s/%s", retry.from, second.session, second.turn.Turn)
	}
	// A turn outside any thread always starts.
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "job", Instructions: "full", Sink: s}))
	if o := recv(t, got); o.from != nil || o.turn.Instructions != "full" {
		t.Fatalf("a turn with no thread opened %+v", o)
	}
	s.until(t)
}

// A fork the client refuses falls back to start with the full instructions,
// and the fallback session becomes the thread's fork point.
func TestForkFallbackOnStartFailed(t *testing.T) {
	h := newHarness(t)
	_, got, refused := forkClient(t, h, []string{"session-forks"}, true)
	first, _ := turnOn(t, h, got, "one")
	second, out := turnOn(t, h, got, "two")
	if from := recv(t, refused); from != (wire.ForkFrom{Session: first.session, Turn: first.turn.Turn}) {
		t.Fatalf("refused fork from %+v", from)
	}
	if out.Status != "finished" || second.from != nil || second.session == first.session ||
		second.turn.Instructions != "system and conversation" || second.turn.Prompt != "two" {
		t.Fatalf("fallback turn %+v, %+v", second, out)
	}
	third, _ := turnOn(t, h, got, "three")
	if from := recv(t, refused); from != (wire.ForkFrom{Session: second.session, Turn: second.turn.Turn}) || third.from != nil {
		t.Fatalf("third turn's fork from %+v, opened %+v", from, third)
	}
}

// A client that did not offer session-forks never receives fork.
func TestForkWithoutFeature(t *testing.T) {
	h := newHarness(t)
	l, got, _ := forkClient(t, h, []string{"retry-turn"}, false)
	if l.Has("session-forks") {
		t.Fatal("session-forks granted unasked")
	}
	for _, p := range []string{"one", "two"} {
		if o, _ := turnOn(t, h, got, p); o.from != nil || o.turn.Instructions != "system and conversation" {
			t.Fatalf("turn %s opened %+v", p, o)
		}
	}
}
