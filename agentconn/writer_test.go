package agentconn

import (
	"errors"
	"testing"
	"time"
)

// The send queue is bounded by bytes: a frame that would overflow it is
// refused (the link then closes as unresponsive), and nothing is queued
// once the link is closing.
func TestWriterQueueIsBounded(t *testing.T) {
	w := newWriter(nil, time.Hour, 10)
	if err := w.send(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	if err := w.send(make([]byte, 5)); !errors.Is(err, errQueueFull) {
		t.Fatalf("a frame past the bound: %v", err)
	}
	if err := w.send(make([]byte, 4)); err != nil {
		t.Fatalf("a frame that fits exactly: %v", err)
	}
	if w.pending() != 10 || len(w.queue) != 2 {
		t.Errorf("pending %d in %d frames", w.pending(), len(w.queue))
	}
	w.close(1000, "bye")
	if err := w.send([]byte("x")); !errors.Is(err, errClosing) {
		t.Errorf("a frame after close: %v", err)
	}
	// The queue drains in order before the close frame.
	for _, want := range []int{6, 4} {
		if f, c := w.next(); len(f) != want || c != nil {
			t.Fatalf("next = %d bytes, close %v; want %d", len(f), c, want)
		}
	}
	if f, c := w.next(); f != nil || c == nil {
		t.Errorf("after the queue: %v %v, want the close frame", f, c)
	}
}
