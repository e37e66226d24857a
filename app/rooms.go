package app

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/ident"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// The browser socket, /ws?channel=<id>: one per open document, carrying
// the room protocol (docs/room-protocol.md).
//
// A person may keep many documents open for days, and an open tab's
// socket is idle nearly all the time, so an idle socket holds as little as
// it can: after the upgrade the HTTP handler returns (the server's
// connection state, buffers and handler stack go), one goroutine reads
// with a small buffer, a frame is written by a goroutine that exists only
// while the socket has frames to write, its buffer comes from a pool every
// socket shares, and pings are timers, not goroutines.

// sendQueueFrames bounds each socket's send queue. A tab that falls this far
// behind is disconnected; it reconnects and catches up with plan:open.
const sendQueueFrames = 512

// writeWait is how long one frame may take to write. A tab that reads
// nothing for this long while a frame is on its way to it is dropped
// without a close frame; one that falls behind sooner hears 4408.
const writeWait = 30 * time.Second

// A socket is pinged every pingPeriod and dropped when it has sent nothing,
// not even the pong, for pongWait.
const (
	pongWait   = 60 * time.Second
	pingPeriod = pongWait * 9 / 10
)

// The browser sockets' buffers: a browser's frames are small (a large one
// is read in several reads), and a write buffer is held only while a frame
// is written.
const (
	socketReadBuffer  = 1 << 10
	socketWriteBuffer = 4 << 10
)

var socketWriteBuffers = &sync.Pool{}

var roomUpgrader = websocket.Upgrader{
	ReadBufferSize:  socketReadBuffer,
	WriteBufferSize: socketWriteBuffer,
	WriteBufferPool: socketWriteBuffers,
	// Origin, Host and the session were checked before upgrading.
	CheckOrigin: func(*http.Request) bool { return true },
}

// sockets is every open browser socket, for shutdown.
type sockets struct {
	mu     sync.Mutex
	open   map[*socket]struct{}
	closed bool
	wait   time.Duration // each frame's write deadline; writeWait when zero (tests set it)
}

func (ss *sockets) add(c *socket) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return false
	}
	if ss.open == nil {
		ss.open = map[*socket]struct{}{}
	}
	ss.open[c] = struct{}{}
	c.wait = ss.wait
	return true
}

// count is how many sockets are open.
func (ss *sockets) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.open)
}

func (ss *sockets) remove(c *socket) {
	ss.mu.Lock()
	delete(ss.open, c)
	ss.mu.Unlock()
}

// closeAll closes every socket with code after the frames queued for it,
// and refuses new ones.
func (ss *sockets) closeAll(code int, reason string) {
	ss.mu.Lock()
	ss.closed = true
	ss.mu.Unlock()
	ss.each(func(c *socket) { c.Close(code, reason) })
}

// each calls f for every socket open now, outside the set's lock.
func (ss *sockets) each(f func(*socket)) {
	ss.mu.Lock()
	open := make([]*socket, 0, len(ss.open))
	for c := range ss.open {
		open = append(open, c)
	}
	ss.mu.Unlock()
	for _, c := range open {
		f(c)
	}
}

// socket is a browser's WebSocket as a room's Conn, with its own send
// queue bounded at sendQueueFrames. Once it starts closing it takes nothing
// more: a member that missed a frame must not carry on as if it had not.
type socket struct {
	conn *websocket.Conn
	ping *time.Timer

	mu        sync.Mutex
	queue     [][]byte // frames not yet written
	writing   bool     // a writer is running (write)
	receiving bool     // the reader is handling a frame, and writes what it queued next
	closing   bool
	closeMsg  []byte // a close frame to write once the queue is sent
	ended     bool   // the reader is gone: no more pings

	wait time.Duration // writeWait, unless a test set another
}

// writeDeadline is when a write started now must be done.
func (c *socket) writeDeadline() time.Time {
	if c.wait > 0 {
		return time.Now().Add(c.wait)
	}
	return time.Now().Add(writeWait)
}

// Send queues frame. A tab with sendQueueFrames already waiting fell
// behind: what is queued is dropped and it is closed with 4408 at once,
// after the frame being written (never cut in half), so a tab that is slow
// but still reading hears the code.
func (c *socket) Send(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return
	case len(c.queue) >= sendQueueFrames:
		c.closing = true
		c.queue = nil
		c.closeMsg = websocket.FormatCloseMessage(room.CloseSlowConsumer, "This tab fell behind; reconnect to catch up.")
	default:
		c.queue = append(c.queue, frame)
	}
	c.startWriterLocked()
}

// Close sends the close frame after the frames already queued (a member
// tells a tab why before closing it).
func (c *socket) Close(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return
	}
	c.closing = true
	c.closeMsg = websocket.FormatCloseMessage(code, reason)
	c.startWriterLocked()
}

// startWriterLocked starts a writer for the queue, unless one is running
// or the socket's reader is handling a frame: then the reader writes the
// queue itself once it is done (received), which saves an acknowledgement
// the hop to another goroutine.
func (c *socket) startWriterLocked() {
	if !c.writing && !c.receiving {
		c.writing = true
		go c.write()
	}
}

// receive hands a frame from the browser to member, then writes what that
// queued (its answer, the change it made) from the reader itself. A tab
// that stops reading holds up only its own reader, never the room: the
// room only queues.
func (c *socket) receive(ctx context.Context, member *room.Member, frame []byte) {
	c.mu.Lock()
	c.receiving = true
	c.mu.Unlock()
	member.Receive(ctx, frame)
	c.mu.Lock()
	c.receiving = false
	if c.writing || (len(c.queue) == 0 && c.closeMsg == nil) {
		c.mu.Unlock()
		return
	}
	c.writing = true
	c.mu.Unlock()
	c.write()
}

// Flush writes what the member queued while it handles a frame, from the
// reader, before the member goes on to work that follows its answer (a
// push's acknowledgement goes out before the checkpoint it made due).
func (c *socket) Flush() {
	c.mu.Lock()
	if !c.receiving || c.writing || (len(c.queue) == 0 && c.closeMsg == nil) {
		c.mu.Unlock()
		return
	}
	c.writing = true
	c.mu.Unlock()
	c.write()
}

// write writes the queued frames in order, then the close frame if one is
// due, and ends when there is nothing left: an idle socket has no writer.
func (c *socket) write() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			msg := c.closeMsg
			c.closeMsg = nil
			if msg == nil {
				c.writing = false
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			// The writer stays marked as running: nothing follows a close.
			_ = c.conn.WriteControl(websocket.CloseMessage, msg, c.writeDeadline())
			c.conn.Close()
			return
		}
		frame := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		_ = c.conn.SetWriteDeadline(c.writeDeadline())
		if err := c.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
			c.mu.Lock()
			c.closing, c.queue, c.closeMsg = true, nil, nil
			c.mu.Unlock()
			c.conn.Close() // the reader sees it and the member leaves
			return
		}
	}
}

// keepAlive pings the socket every pingPeriod, from a timer.
func (c *socket) keepAlive() {
	_ = c.conn.WriteControl(websocket.PingMessage, nil, c.writeDeadline())
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.ping.Reset(pingPeriod)
	}
}

func (a *App) handleRoomSocket(c echo.Context) error {
	r := c.Request()
	signOuts := a.signOuts.Load() // before the session is checked: see closeSignedOutSockets
	if a.callerOf(c) != browser {
		return errSignInRequired
	}
	if err := a.checkOrigin(r, false); err != nil {
		return err
	}
	if !isBrowserUpgrade(r) {
		return badRequest("websocket-required", "This address takes a WebSocket upgrade.")
	}
	id := c.QueryParam("channel")
	if !ident.ValidDocumentID(id) {
		return badRequest("invalid-channel-id", "Name the document as /ws?channel=<document ID>.")
	}
	ch, err := a.store.Channel(r.Context(), id)
	if err != nil {
		return err
	}
	conn, err := roomUpgrader.Upgrade(c.Response(), r, nil)
	if err != nil {
		return nil // the upgrader has answered
	}
	sock := &socket{conn: conn}
	if !a.sockets.add(sock) {
		_ = conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "Chopin is shutting down."), time.Now().Add(time.Second))
		conn.Close()
		return nil
	}
	go a.serveRoomSocket(sock, ch, signOuts)
	return nil
}

// serveRoomSocket joins an upgraded socket to its document's room and
// reads its frames until it closes. signOuts is the count of sign-outs
// everywhere read before its session was checked (closeSignedOutSockets).
func (a *App) serveRoomSocket(sock *socket, ch store.Channel, signOuts int64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		sock.mu.Lock()
		sock.ended = true
		sock.ping.Stop()
		sock.mu.Unlock()
		sock.conn.Close()
		a.sockets.remove(sock)
	}()
	conn := sock.conn
	conn.SetReadLimit(room.MaxFrameBytes)
	_ = conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	sock.ping = time.AfterFunc(pingPeriod, sock.keepAlive)

	if signOuts != a.signOuts.Load() {
		// Its browser was signed out while it upgraded.
		sock.Close(CloseSignedOut, signedOutReason)
		drain(conn)
		return
	}
	member, err := a.hub.Join(ctx, a.roomChannel(ch), a.identity(), sock)
	if errors.Is(err, room.ErrDeleted) {
		// Deleted before it joined: told so and closed with 4404; read
		// until the close goes out.
		drain(conn)
		return
	}
	if err != nil {
		a.log.Error("join room", "channel", ch.ID, "err", err)
		a.showDamage(sock) // a document never opened needs a write to open
		sock.Close(websocket.CloseInternalServerErr, "Chopin could not open this document.")
		drain(conn)
		return
	}
	defer member.Leave()
	member.ShowModel(a.planner.ModelState(ch.ID))
	a.showDamage(sock)
	if views, err := a.jobViews(ctx, ch.ID); err == nil {
		member.ShowJobs(views)
	}
	// A browser opening the document ensures its description is current.
	if !ch.Archived() {
		go a.describer.ensure(ch.ID, 0)
	}
	for {
		typ, frame, err := conn.ReadMessage()
		if err != nil {
			return
		}
		switch typ {
		case websocket.TextMessage:
			sock.receive(ctx, member, frame)
		case websocket.BinaryMessage:
			sock.Close(websocket.CloseUnsupportedData, "This socket takes JSON text frames only.")
		}
	}
}

// CloseSignedOut closes a browser's sockets when its sign-in ends (sign out
// everywhere): the tab shows the sign-in page and does not reconnect. The
// agent protocol closes a link for the same cause with the same code.
const CloseSignedOut = 4401

const signedOutReason = "This browser was signed out; run chopin open to sign in again."

// closeSignedOutSockets closes every open room socket with CloseSignedOut,
// after the frames already queued to it: sign out everywhere ended every
// browser session, so every socket rests on one that ended. A socket being
// upgraded meanwhile checked its session before the count went up, and
// closes itself before it joins (serveRoomSocket).
func (a *App) closeSignedOutSockets() {
	a.signOuts.Add(1)
	a.sockets.each(func(c *socket) { c.Close(CloseSignedOut, signedOutReason) })
}

// drain reads a socket that takes no frames until it closes.
func drain(conn *websocket.Conn) {
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}

// identity is the local account as a room member: it administers every
// repository (see canWrite).
func (a *App) identity() room.Identity {
	return room.Identity{Login: a.cfg.Login, Name: a.cfg.DisplayName, CanEdit: true, CanManage: true}
}

// roomCatalog is the catalog as rooms read it: a room reads its entry when
// it opens and after every change, never a copy read before the change.
type roomCatalog struct{ a *App }

func (c roomCatalog) Channel(ctx context.Context, id string) (room.Channel, error) {
	ch, err := c.a.store.Channel(ctx, id)
	if err != nil {
		return room.Channel{}, err
	}
	return c.a.roomChannel(ch), nil
}

func (roomCatalog) IsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// roomChannel is a catalog entry as a room knows it.
func (a *App) roomChannel(ch store.Channel) room.Channel {
	rc := room.Channel{ID: ch.ID, Title: ch.Title, Slug: ch.Slug, Repository: ch.Repository,
		URL: a.origin + documentPath(ch)}
	if ch.Archived() {
		rc.ArchivedAt = rfc3339(ch.ArchivedAt)
	}
	if ch.Description != nil {
		rc.Description = *ch.Description
	}
	rc.DescriptionRevision = ch.DescriptionRevision
	return rc
}
