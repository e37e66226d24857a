package room

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Hub holds the open rooms, one per document. A room opens when something
// first needs it (a browser socket, the attached Planner, an HTTP edit) and
// closes, with a final checkpoint, when the last of them lets go. Closing is
// serialised against reopening: an open that arrives while the same
// document is closing waits for the close, so it loads every change.
type Hub struct {
	persist  Persister
	comments CommentStore  // nil: the hub keeps no comment threads
	channels ChannelSource // nil: a room keeps the entry it was opened with
	planner  Planner
	log      *slog.Logger
	now      func() time.Time
	// attachments bound the files of a person's message (attachments.go).
	attachments AttachmentLimits
	// unawaited hears of answers nobody waited on (await.go).
	unawaited func(channelID, request string)

	mu      sync.Mutex
	rooms   map[string]*Room
	closing map[string]chan struct{}
}

// Options configure a Hub.
type Options struct {
	Persister Persister
	// Comments keeps the documents' comment threads (comments.go).
	Comments CommentStore
	Planner  Planner
	Logger   *slog.Logger
	Clock    func() time.Time
	// Attachments bound the files a person sends with a message.
	Attachments AttachmentLimits
	// Channels is the catalog: a room reads its document's entry there when
	// it opens and whenever the entry changes, so it never keeps a copy
	// read before a rename, archive, restore or delete.
	Channels ChannelSource
}

// ChannelSource reads a document's catalog entry as it is now. A deleted
// document is an error for which IsNotFound is true.
type ChannelSource interface {
	Channel(ctx context.Context, id string) (Channel, error)
	IsNotFound(err error) bool
}

// NewHub returns a hub with no open rooms.
func NewHub(o Options) *Hub {
	h := &Hub{
		persist:  o.Persister,
		comments: o.Comments,
		channels: o.Channels,
		planner:  o.Planner,
		log:      o.Logger,
		now:      o.Clock,
		rooms:    map[string]*Room{},
		closing:  map[string]chan struct{}{},
	}
	h.attachments = o.Attachments
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.planner == nil {
		h.planner = noPlanner{}
	}
	return h
}

// Acquire opens the document's room (or joins it while open) and returns it
// with a release function that must be called exactly once.
func (h *Hub) Acquire(ctx context.Context, ch Channel) (*Room, func(), error) {
	for {
		h.mu.Lock()
		if done, ok := h.closing[ch.ID]; ok {
			h.mu.Unlock()
			select {
			case <-done:
				continue
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		r, ok := h.rooms[ch.ID]
		if !ok {
			r = newRoom(h, ch)
			h.rooms[ch.ID] = r
		}
		r.refs++
		h.mu.Unlock()

		// Loading happens once, outside the hub lock; later arrivals wait on it.
		if err := r.load(ctx); err != nil {
			h.release(r)
			return nil, nil, err
		}
		var once sync.Once
		return r, func() { once.Do(func() { h.release(r) }) }, nil
	}
}

// release drops one reference; the last one closes the room.
func (h *Hub) release(r *Room) {
	h.mu.Lock()
	r.refs--
	if r.refs > 0 || h.rooms[r.channelID] != r {
		// Still in use, or already taken out by Close.
		h.mu.Unlock()
		return
	}
	delete(h.rooms, r.channelID)
	done := make(chan struct{})
	h.closing[r.channelID] = done
	h.mu.Unlock()

	go func() {
		r.close()
		h.mu.Lock()
		delete(h.closing, r.channelID)
		h.mu.Unlock()
		close(done)
	}()
}

// Room returns the document's room if it is open.
func (h *Hub) Room(channelID string) (*Room, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rooms[channelID]
	return r, ok
}

// Do runs fn on the document's room, opening it for the call if needed.
func (h *Hub) Do(ctx context.Context, ch Channel, fn func(*Room) error) error {
	r, release, err := h.Acquire(ctx, ch)
	if err != nil {
		return err
	}
	defer release()
	return fn(r)
}

// ChannelChanged tells an open room about a rename, archive or restore
// that has committed. With a ChannelSource the room reads its entry again,
// so whichever of several changes is told last, the room ends as the
// catalog is; a room still opening reads it after this change anyway.
func (h *Hub) ChannelChanged(ch Channel) {
	if r, ok := h.Room(ch.ID); ok {
		r.setChannel(ch)
	}
}

// ChannelDeleted closes every socket of a deleted document for good.
func (h *Hub) ChannelDeleted(channelID string) {
	if r, ok := h.Room(channelID); ok {
		r.deleted()
	}
}

// Close checkpoints and closes every open room, and waits for rooms that
// are already closing. Members are disconnected.
func (h *Hub) Close() {
	h.mu.Lock()
	rooms := make([]*Room, 0, len(h.rooms))
	for _, r := range h.rooms {
		rooms = append(rooms, r)
	}
	h.rooms = map[string]*Room{}
	var waits []chan struct{}
	for _, done := range h.closing {
		waits = append(waits, done)
	}
	h.mu.Unlock()
	for _, r := range rooms {
		r.disconnectAll(CloseGoingAway, "Chopin is shutting down")
		r.close()
	}
	for _, done := range waits {
		<-done
	}
}

// OpenRooms counts the open rooms.
func (h *Hub) OpenRooms() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.rooms)
}

func (h *Hub) logf(r *Room) *slog.Logger { return h.log.With("channel", r.channelID) }

var errClosed = fmt.Errorf("room closed")
