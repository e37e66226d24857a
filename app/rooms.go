package app

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
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

func (a *App) newMelody() *melody.Melody {
	m := melody.New()
	m.Config.MaxMessageSize = room.MaxFrameBytes
	m.Config.MessageBufferSize = sendQueueFrames
	m.Config.WriteWait = 10 * time.Second
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
	m.HandleError(func(s *melody.Session, err error) {
		if errors.Is(err, melody.ErrMessageBufferFull) {
			socketOf(s).Close(room.CloseSlowConsumer, "This tab fell behind; reconnect to catch up.")
		}
	})
	m.HandleDisconnect(func(s *melody.Session) {
		if member, ok := memberOf(s); ok {
			member.Leave()
		}
	})
	return m
}

// socket is a melody session as a room's Conn. Once it starts closing it
// sends nothing more: a member that missed a frame must not carry on as if
// it had not.
type socket struct {
	s       *melody.Session
	closing atomic.Bool
}

func socketOf(s *melody.Session) *socket { return s.MustGet("socket").(*socket) }

func (c *socket) Send(frame []byte) {
	if !c.closing.Load() {
		c.s.Write(frame)
	}
}

// Close queues a close frame. A full queue has no room for it, so it tries
// again until the writer has made room or the connection has died.
func (c *socket) Close(code int, reason string) {
	if !c.closing.CompareAndSwap(false, true) {
		return
	}
	msg := websocket.FormatCloseMessage(code, reason)
	go func() {
		for i := 0; i < 1000 && !c.s.IsClosed(); i++ {
			c.s.CloseWithMsg(msg)
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

func (a *App) handleRoomSocket(c echo.Context) error {
	r := c.Request()
	if a.callerOf(c) != browser {
		return errSignInRequired
	}
	if err := a.checkOrigin(r, false); err != nil {
		return err
	}
	if !websocket.IsWebSocketUpgrade(r) {
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
	keys := map[string]any{"socket": &socket{}, "channel": ch}
	return a.melody.HandleRequestWithKeys(c.Response(), r, keys)
}

// handleRoomConnect joins an upgraded socket to its document's room.
func (a *App) handleRoomConnect(s *melody.Session) {
	sock := socketOf(s)
	sock.s = s
	ch := s.MustGet("channel").(store.Channel)
	member, err := a.hub.Join(context.Background(), a.roomChannel(ch), a.identity(), sock)
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
