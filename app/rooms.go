package app

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"github.com/olahol/melody"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// The browser socket, /ws?channel=<id>: one per open document, carrying
// the room protocol (docs/room-protocol.md).

// sendQueueFrames bounds each socket's send queue. A tab that falls this far
// behind is disconnected; it reconnects and catches up with plan:open.
const sendQueueFrames = 512

// The socket keeps its own queue and hands melody one frame at a time, so
// melody's buffer holds at most that frame and close frames: a close always
// finds room there, and goes out next.
const melodyBufferFrames = 4

// writeWait is how long one frame may take to write. A tab that reads
// nothing for this long while a frame is on its way to it is dropped
// without a close frame; one that falls behind sooner hears 4408.
const writeWait = 30 * time.Second

func (a *App) newMelody() *melody.Melody {
	m := melody.New()
	m.Config.MaxMessageSize = room.MaxFrameBytes
	m.Config.MessageBufferSize = melodyBufferFrames
	m.Config.WriteWait = writeWait
	// Origin, Host and the session were checked before upgrading.
	m.Upgrader.CheckOrigin = func(*http.Request) bool { return true }
	m.HandleConnect(a.handleRoomConnect)
	m.HandleMessage(func(s *melody.Session, frame []byte) {
		if member, ok := memberOf(s); ok {
			member.Receive(s.Request.Context(), frame)
		}
	})
	m.HandleMessageBinary(func(s *melody.Session, _ []byte) {
		socketOf(s).Close(websocket.CloseUnsupportedData, "This socket takes JSON text frames only.")
	})
	m.HandleSentMessage(func(s *melody.Session, _ []byte) { socketOf(s).sent() })
	m.HandleDisconnect(func(s *melody.Session) {
		if member, ok := memberOf(s); ok {
			member.Leave()
		}
	})
	return m
}

// socket is a melody session as a room's Conn, with its own send queue
// bounded at sendQueueFrames. Once it starts closing it takes nothing more:
// a member that missed a frame must not carry on as if it had not.
type socket struct {
	s *melody.Session

	mu       sync.Mutex
	queue    [][]byte // frames not yet handed to melody
	writing  bool     // melody holds a frame it has not finished writing
	closing  bool
	closeMsg []byte // a close frame to hand melody once the queue is sent
}

func socketOf(s *melody.Session) *socket { return s.MustGet("socket").(*socket) }

// Send queues frame. A tab with sendQueueFrames already waiting fell
// behind: what is queued is dropped and it is closed with 4408 at once,
// after the frame being written (never cut in half), so a tab that is slow
// but still reading hears the code.
func (c *socket) Send(frame []byte) {
	c.mu.Lock()
	switch {
	case c.closing:
		c.mu.Unlock()
		return
	case len(c.queue) >= sendQueueFrames:
		c.closing = true
		c.queue = nil
		c.mu.Unlock()
		_ = c.s.CloseWithMsg(websocket.FormatCloseMessage(room.CloseSlowConsumer, "This tab fell behind; reconnect to catch up."))
		return
	case c.writing:
		c.queue = append(c.queue, frame)
		c.mu.Unlock()
		return
	}
	c.writing = true
	c.mu.Unlock()
	_ = c.s.Write(frame)
}

// sent hands melody the next frame once it has written the last one, and
// the close frame after the last. Only one frame is with melody at a time,
// so frames keep their order and a close always finds room.
func (c *socket) sent() {
	c.mu.Lock()
	if len(c.queue) == 0 {
		c.writing = false
		msg := c.closeMsg
		c.closeMsg = nil
		c.mu.Unlock()
		if msg != nil {
			_ = c.s.CloseWithMsg(msg)
		}
		return
	}
	frame := c.queue[0]
	c.queue[0] = nil
	c.queue = c.queue[1:]
	c.mu.Unlock()
	_ = c.s.Write(frame)
}

// connected reports whether the socket has its melody session yet.
func (c *socket) connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s != nil
}

// Close sends the close frame after the frames already queued (a member
// tells a tab why before closing it).
func (c *socket) Close(code int, reason string) {
	msg := websocket.FormatCloseMessage(code, reason)
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	if len(c.queue) > 0 {
		c.closeMsg = msg
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	_ = c.s.CloseWithMsg(msg)
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
	if !store.ValidChannelID(id) {
		return badRequest("invalid-channel-id", "Name the document as /ws?channel=<document ID>.")
	}
	ch, err := a.store.Channel(r.Context(), id)
	if err != nil {
		return err
	}
	keys := map[string]any{"socket": &socket{}, "channel": ch, "signOuts": signOuts}
	return a.melody.HandleRequestWithKeys(c.Response(), r, keys)
}

// handleRoomConnect joins an upgraded socket to its document's room.
func (a *App) handleRoomConnect(s *melody.Session) {
	sock := socketOf(s)
	sock.mu.Lock()
	sock.s = s
	sock.mu.Unlock()
	if s.MustGet("signOuts").(int64) != a.signOuts.Load() {
		sock.Close(CloseSignedOut, signedOutReason)
		return // its browser was signed out while it upgraded
	}
	ch := s.MustGet("channel").(store.Channel)
	member, err := a.hub.Join(context.Background(), a.roomChannel(ch), a.identity(), sock)
	if errors.Is(err, room.ErrDeleted) {
		return // deleted before it joined: told so and closed with 4404
	}
	if err != nil {
		a.log.Error("join room", "channel", ch.ID, "err", err)
		sock.Close(websocket.CloseInternalServerErr, "Chopin could not open this document.")
		return
	}
	s.Set("member", member)
	member.ShowModel(a.planner.ModelState(ch.ID))
	if views, err := a.jobViews(context.Background(), ch.ID); err == nil {
		member.ShowJobs(views)
	}
	// A browser opening the document ensures its description is current.
	if !ch.Archived() {
		go a.describer.ensure(ch.ID, 0)
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
// closes itself when it connects (handleRoomConnect).
func (a *App) closeSignedOutSockets() {
	a.signOuts.Add(1)
	sessions, err := a.melody.Sessions()
	if err != nil {
		return // melody closed: the server is stopping
	}
	for _, s := range sessions {
		// One not yet connected has no session to close: it sees the
		// count went up when it connects.
		if sock, ok := s.Get("socket"); ok && sock.(*socket).connected() {
			sock.(*socket).Close(CloseSignedOut, signedOutReason)
		}
	}
}

func memberOf(s *melody.Session) (*room.Member, bool) {
	v, ok := s.Get("member")
	if !ok {
		return nil, false
	}
	return v.(*room.Member), true
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
