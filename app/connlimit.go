package app

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// What one local process can hold of the HTTP server. Every connection has
// a deadline for its headers, its body and its idle keep-alive, and the
// server holds at most connLimits.max connections at once, below the file
// limit (raised to its hard limit at start), so that slow or idle clients
// never leave Chopin without a file to answer /healthz, open its database
// or accept a browser.
//
// Holding is not enough: a crowd of idle keep-alive connections, which
// need no credentials, would hold every place until their idle deadline
// and leave a signed-in request waiting in the kernel's queue. So a
// connection that is idle (between requests, or accepted and still without
// a whole request) can be closed to make room, oldest first, and those
// that never carried a signed-in request go before those that did:
//
//   - at most idleAnonymous keep-alive connections idle between requests
//     that never carried a signed-in request are held, well below the
//     file limit (a connection still without its first request is not
//     counted: a crowd of clients arriving at once must not close each
//     other; its header deadline bounds it);
//   - past half of max (under pressure), a connection idle longer than
//     idleUnderPressure is closed, instead of after the idle deadline;
//   - past max, the oldest idle connections are closed until there is a
//     place for the new one; only when none is idle does it wait for one
//     to end.
//
// A connection answering a request, and an upgraded WebSocket (whose own
// pings and queues govern it), is never closed to make room.

// connLimits are the HTTP server's connection limits; tests lower them,
// between New and Run.
type connLimits struct {
	max               int           // connections held at once
	idleAnonymous     int           // idle connections never signed in, held at once
	idleUnderPressure time.Duration // how long a connection may idle past max/2
	readHeader        time.Duration // for a request's headers
	read              time.Duration // for a whole request
	idle              time.Duration // for a keep-alive between requests
}

// filesReserved are the files kept back from connections for the database,
// its log, the lock, the config and the like.
const filesReserved = 128

// defaultConnLimits are the limits for a file limit of files.
func defaultConnLimits(files int) connLimits {
	n := connectionCap(files)
	return connLimits{
		max:               n,
		idleAnonymous:     idleAnonymousCap(n),
		idleUnderPressure: 5 * time.Second,
		readHeader:        10 * time.Second,
		read:              time.Minute,
		idle:              2 * time.Minute,
	}
}

// connectionCap is how many connections the server holds at once for a
// file limit of files: what is left after filesReserved, and at least 64.
func connectionCap(files int) int {
	return max(64, files-filesReserved)
}

// idleAnonymousCap is how many idle connections that never carried a
// signed-in request are held among max: a quarter, at most 256 (a browser
// keeps six or so to one host), at least 16.
func idleAnonymousCap(n int) int {
	return max(16, min(256, n/4))
}

// serveConnections applies the limits to the server and returns the
// listener it serves: it tracks every connection, marks those that carry a
// signed-in request (markSignedIn) and makes room as above.
func (a *App) serveConnections() net.Listener {
	t := &connTracker{limits: a.conns, conns: map[*trackedConn]struct{}{}}
	t.cond = sync.NewCond(&t.mu)
	a.server.ReadHeaderTimeout = a.conns.readHeader
	a.server.ReadTimeout = a.conns.read
	a.server.IdleTimeout = a.conns.idle
	a.server.ConnState = t.setState
	a.server.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*trackedConn); ok {
			return context.WithValue(ctx, trackedConnKey{}, tc)
		}
		return ctx
	}
	return &trackingListener{Listener: a.listener, t: t}
}

type trackedConnKey struct{}

// markSignedIn records that r's connection carried a signed-in request
// (the browser's session, or the agent token): it is closed to make room
// only after every idle connection that never did.
func markSignedIn(r *http.Request) {
	if tc, ok := r.Context().Value(trackedConnKey{}).(*trackedConn); ok {
		tc.t.mu.Lock()
		tc.signedIn = true
		tc.t.mu.Unlock()
	}
}

// connTracker is every connection the server holds.
type connTracker struct {
	limits connLimits // set at construction

	mu     sync.Mutex
	cond   *sync.Cond // on mu: a connection ended, or the listener closed
	conns  map[*trackedConn]struct{}
	closed bool // the listener is closed: nothing waits for a place
}

// trackedConn is a connection and what its tracker knows of it (guarded
// by the tracker's mu).
type trackedConn struct {
	net.Conn
	t *connTracker

	state    http.ConnState
	since    time.Time // when it entered state
	signedIn bool
}

func (c *trackedConn) Close() error {
	c.t.remove(c)
	return c.Conn.Close()
}

// idle reports a connection that may be closed to make room: between
// requests, or accepted and still without a whole request.
func (c *trackedConn) idle() bool {
	return c.state == http.StateIdle || c.state == http.StateNew
}

func (t *connTracker) setState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*trackedConn)
	if !ok {
		return
	}
	if s == http.StateClosed {
		t.remove(c)
		return
	}
	t.mu.Lock()
	c.state, c.since = s, time.Now()
	if s == http.StateIdle {
		t.cond.Broadcast() // a connection waiting for a place may have one
	}
	t.mu.Unlock()
}

func (t *connTracker) remove(c *trackedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.conns[c]; ok {
		delete(t.conns, c)
		t.cond.Broadcast()
	}
}

// admit holds c, making room for it first: it returns once c has a place
// (or the listener closed).
func (t *connTracker) admit(c *trackedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.conns[c] = struct{}{}
	for !t.closed {
		for _, v := range t.toCloseLocked(c) {
			delete(t.conns, v)
			v.Conn.Close() // the server's reader sees it closed and ends
		}
		if len(t.conns) <= t.limits.max {
			return
		}
		t.cond.Wait()
	}
}

// toCloseLocked is the idle connections to close as c comes (see the top
// of this file).
func (t *connTracker) toCloseLocked(c *trackedConn) []*trackedConn {
	var idle []*trackedConn
	anonymous := 0
	for o := range t.conns {
		if o != c && o.idle() {
			idle = append(idle, o)
			if !o.signedIn && o.state == http.StateIdle {
				anonymous++
			}
		}
	}
	// Never signed in first, then the oldest first.
	slices.SortFunc(idle, func(x, y *trackedConn) int {
		if x.signedIn != y.signedIn {
			if x.signedIn {
				return 1
			}
			return -1
		}
		return x.since.Compare(y.since)
	})
	now, held := time.Now(), len(t.conns)
	var out []*trackedConn
	for _, o := range idle {
		switch {
		case !o.signedIn && o.state == http.StateIdle && anonymous > t.limits.idleAnonymous:
			anonymous--
		case held > t.limits.max:
		case held > t.limits.max/2 && now.Sub(o.since) > t.limits.idleUnderPressure:
		default:
			continue
		}
		out = append(out, o)
		held--
	}
	return out
}

// trackingListener admits each connection it accepts through its tracker.
type trackingListener struct {
	net.Listener
	t *connTracker
}

func (l *trackingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &trackedConn{Conn: nc, t: l.t, state: http.StateNew, since: time.Now()}
	l.t.admit(c)
	return c, nil
}

func (l *trackingListener) Close() error {
	l.t.mu.Lock()
	l.t.closed = true
	l.t.cond.Broadcast()
	l.t.mu.Unlock()
	return l.Listener.Close()
}
