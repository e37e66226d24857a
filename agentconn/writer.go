package agentconn

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// writer is a link's only writer of data frames (gorilla/websocket allows one
// concurrent writer). The link never blocks on a slow reader: frames go into a
// queue bounded by bytes, and a frame that would overflow it is refused, which
// the link treats as an unresponsive client: abort drops the queue and sends
// the close frame next. Pings are sent every ping
// interval, but only while nothing is queued, since a ping queued behind a
// backlog proves nothing ("Pings").
type writer struct {
	conn *websocket.Conn
	ping time.Duration
	max  int

	mu      sync.Mutex
	queue   [][]byte
	queued  int    // bytes in queue
	closing []byte // the close frame's payload, once the link closes
	wake    chan struct{}

	// lastDrain is when a queued frame was last written out (UnixNano): a
	// queue getting shorter puts off the unresponsive close, but does not
	// count as hearing from the client.
	lastDrain atomic.Int64
	done      chan struct{} // closed when run returns
}

var (
	errQueueFull = errors.New("the send queue is full")
	errClosing   = errors.New("the link is closing")
)

func newWriter(conn *websocket.Conn, ping time.Duration, max int) *writer {
	return &writer{conn: conn, ping: ping, max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues one text frame.
func (w *writer) send(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing != nil {
		return errClosing
	}
	if w.queued+len(frame) > w.max {
		return errQueueFull
	}
	if cap(frame)-len(frame) > len(frame)/8 {
		// An encoder's buffer can be twice the frame it holds: queue the
		// frame alone, so the queue's bound is the memory it holds.
		frame = bytes.Clone(frame)
	}
	w.queue = append(w.queue, frame)
	w.queued += len(frame)
	w.signal()
	return nil
}

// close queues the close frame after everything already queued; later sends
// are dropped. The first close wins.
func (w *writer) close(code int, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing == nil {
		w.closing = websocket.FormatCloseMessage(code, reason)
		w.signal()
	}
}

func (w *writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// pending reports how many bytes wait to be written.
func (w *writer) pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queued
}

// abort closes a client too far behind: what is queued but not yet written
// is dropped (a frame being written is finished, never cut in half), and the
// close frame goes next, so a client that is slow but still reading hears
// the code. It replaces a close still waiting behind the queue.
func (w *writer) abort(code int, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.queue {
		w.queued -= len(f)
	}
	w.queue = nil
	w.closing = websocket.FormatCloseMessage(code, reason)
	w.signal()
}

// next pops the next frame, or reports the close frame once the queue is empty.
func (w *writer) next() (frame, closeFrame []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return nil, w.closing
	}
	frame = w.queue[0]
	w.queue[0] = nil
	w.queue = w.queue[1:]
	return frame, nil
}

// run writes until the close frame is written, a write fails, or stop closes.
// A write blocked on a client that does not read is ended by the link's
// liveness check closing the connection.
func (w *writer) run(stop <-chan struct{}) {
	defer close(w.done)
	ticker := time.NewTicker(w.ping)
	defer ticker.Stop()
	pingDue := false
	for {
		select {
		case <-w.wake:
		case <-ticker.C:
			pingDue = true
		case <-stop:
			return
		}
		for {
			frame, closeFrame := w.next()
			if frame == nil {
				if closeFrame != nil {
					_ = w.conn.WriteControl(websocket.CloseMessage, closeFrame, time.Now().Add(time.Second))
					return
				}
				break
			}
			if err := w.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
				return
			}
			w.mu.Lock()
			w.queued -= len(frame)
			w.mu.Unlock()
			w.lastDrain.Store(time.Now().UnixNano())
		}
		if pingDue {
			pingDue = false
			// The write may take a second even with a shorter ping interval:
			// a write past its deadline breaks the connection for good
			// (gorilla/websocket), so on a loaded machine the close frame
			// that follows would be lost too.
			if err := w.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(max(w.ping, time.Second))); err != nil {
				return
			}
		}
	}
}
