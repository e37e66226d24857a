package room

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
)

// Channel is what a room knows of its document's catalog entry.
type Channel struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Slug       string `json:"slug"`
	Repository string `json:"repository"`
	URL        string `json:"url"` // the readable browser route, /documents/...
	ArchivedAt string `json:"archivedAt,omitempty"`
	// Description is the generated one-line description, untrusted model
	// output to show as plain text; DescriptionRevision counts its changes.
	Description         string `json:"description,omitempty"`
	DescriptionRevision int64  `json:"descriptionRevision"`
}

// Archived reports whether the document is read-only for being archived.
func (c Channel) Archived() bool { return c.ArchivedAt != "" }

// Close codes a room sends its sockets.
const (
	CloseGoingAway     = 1001 // the server is stopping, or the room closed
	CloseDeleted       = 4404 // the document was deleted: do not reconnect
	CloseSlowConsumer  = 4408 // the socket fell behind: reconnect and catch up
	ClosePolicyViolate = 1008
)

// Conn is a member's connection as the room sees it. Send must never block:
// a connection that cannot take more closes itself and reconnects.
type Conn interface {
	Send(frame []byte)
	Close(code int, reason string)
}

// Flusher is a Conn that holds back what it is sent while its member
// handles a frame, and writes it once Receive returns (the app's browser
// socket writes from its reader). Flush writes it now: a member flushes its
// answer before the work that follows the answer, such as a checkpoint.
type Flusher interface {
	Flush()
}

// Identity is who a member is and what they may do.
type Identity struct {
	Login     string `json:"login"`
	Name      string `json:"name"`
	CanEdit   bool   `json:"canEdit"`   // may change the document when it is active
	CanManage bool   `json:"canManage"` // may rename, archive, restore, delete
}

// Room is one open document: its plan, Chat and Decisions, and the members
// looking at it. One mutex orders everything that happens in the room;
// durable writes happen under it, before the change is published, so every
// member sees changes in the order they were stored.
type Room struct {
	hub       *Hub
	channelID string
	refs      int // guarded by hub.mu

	loadOnce sync.Once
	loadErr  error

	mu       sync.Mutex
	cpDone   *sync.Cond // on mu: a checkpoint written outside the lock finished
	closed   bool
	gone     bool // the document was deleted
	channel  Channel
	members  map[*Member]struct{}
	plan     plan
	chat     chat
	cards    decisions
	comments comments
	replies  map[string]*PlannerReply // the Planner's replies still streaming, by message ID
}

func newRoom(h *Hub, ch Channel) *Room {
	r := &Room{hub: h, channelID: ch.ID, channel: ch, members: map[*Member]struct{}{}}
	r.cpDone = sync.NewCond(&r.mu)
	return r
}

func (r *Room) load(ctx context.Context) error {
	r.loadOnce.Do(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.loadErr = r.loadLocked(ctx)
	})
	return r.loadErr
}

func (r *Room) loadLocked(ctx context.Context) error {
	// The entry is read under the room's lock, after the room is listed in
	// the hub: a catalog change that commits before this read is in it, and
	// one that commits after finds the room and updates it once this is done.
	if src := r.hub.channels; src != nil {
		ch, err := src.Channel(ctx, r.channelID)
		if err != nil {
			return err
		}
		r.channel = ch
	}
	if err := r.plan.load(ctx, r); err != nil {
		return fmt.Errorf("load plan: %w", err)
	}
	if err := r.chat.load(ctx, r); err != nil {
		return fmt.Errorf("load chat: %w", err)
	}
	if err := r.cards.load(ctx, r); err != nil {
		return fmt.Errorf("load decisions: %w", err)
	}
	if err := r.comments.load(ctx, r); err != nil {
		return fmt.Errorf("load comments: %w", err)
	}
	return nil
}

// close writes the final checkpoint. It runs once, after the last release.
func (r *Room) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	for r.plan.cpWriting {
		r.cpDone.Wait()
	}
	if r.loadErr == nil && !r.gone {
		if err := r.plan.checkpoint(context.Background(), r); err != nil {
			r.hub.logf(r).Error("final checkpoint", "err", err)
		}
	}
}

// Channel returns the document's catalog entry as the room knows it.
func (r *Room) Channel() Channel {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.channel
}

func (r *Room) setChannel(ch Channel) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone {
		return
	}
	if src := r.hub.channels; src != nil {
		now, err := src.Channel(context.Background(), r.channelID)
		if err != nil {
			return // deleted meanwhile: ChannelDeleted follows
		}
		ch = now
	}
	r.channel = ch
	for m := range r.members {
		m.sendLocked(r, msgChannel{Type: "session:channel", Channel: ch, CanEdit: m.canEditLocked(r)})
	}
}

func (r *Room) deleted() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gone = true
	r.broadcastLocked(msgDeleted{Type: "session:deleted", Channel: r.channelID})
	for m := range r.members {
		m.conn.Close(CloseDeleted, "This document was deleted.")
	}
}

func (r *Room) disconnectAll(code int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for m := range r.members {
		m.conn.Close(code, reason)
	}
}

// broadcastLocked sends one message to every member, encoding it once.
func (r *Room) broadcastLocked(v any) {
	frame := encode(v)
	for m := range r.members {
		m.conn.Send(frame)
	}
}

// writableLocked refuses a change while the document is archived.
func (r *Room) writableLocked() error {
	if r.gone {
		return errorf(CodeNotFound, "This document was deleted.")
	}
	if r.channel.Archived() {
		return errorf(CodeDocumentArchived, "This document is archived, so it is read-only. Restore it to change it.")
	}
	return nil
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("room: encode %T: %v", v, err)) // our own types always encode
	}
	return b
}

func newID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}
