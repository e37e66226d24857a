package room

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/textrule"
)

// MaxPushUpdates bounds the updates of one plan:push: each is checked and
// applied under the room's lock, so a frame of tens of thousands of empty
// updates would hold the document for seconds. A browser pushes its outbox
// this many at a time.
const MaxPushUpdates = 500

// MaxFrameBytes bounds one frame from a browser. A push carries at most a
// whole plan (256 KiB of source), which JSON escaping can at most inflate a
// few times over.
const MaxFrameBytes = 2 << 20

// ErrDeleted is Join's answer for a document deleted before the socket
// joined: the socket was sent session:deleted and closed with 4404.
var ErrDeleted = errors.New("the document was deleted")

// Member is one browser socket in a room.
type Member struct {
	room    *Room
	conn    Conn
	who     Identity
	release func()
	tab     string // names the socket to the other tabs (decision:draft)
}

// Join adds a socket to the document's room and sends it session:hello and
// the current Chat and Decisions; the plan follows its plan:open.
func (h *Hub) Join(ctx context.Context, ch Channel, who Identity, conn Conn) (*Member, error) {
	r, release, err := h.Acquire(ctx, ch)
	if err != nil {
		if h.channels != nil && h.channels.IsNotFound(err) {
			conn.Send(encode(msgDeleted{Type: "session:deleted", Channel: ch.ID}))
			conn.Close(CloseDeleted, "This document was deleted.")
			return nil, ErrDeleted
		}
		return nil, err
	}
	msgs, err := r.Messages(ctx, chatSnapshotSize)
	if err != nil {
		release()
		return nil, err
	}
	frames := newestWithin(ForFrames(msgs), maxChatSnapshotBytes)
	var before *string
	if len(frames) > 0 && (len(frames) < len(msgs) || len(msgs) == chatSnapshotSize) {
		cur := MessageCursor(frames[0].Seq)
		before = &cur
	}
	m := &Member{room: r, conn: conn, who: who, release: release, tab: newID()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone {
		// Deleted after the room opened: the socket hears it as the
		// members did.
		m.sendLocked(r, msgDeleted{Type: "session:deleted", Channel: r.channelID})
		conn.Close(CloseDeleted, "This document was deleted.")
		release()
		return nil, ErrDeleted
	}
	r.members[m] = struct{}{}
	m.sendLocked(r, msgHello{Type: "session:hello", Identity: m.identityLocked(r), Channel: r.channel})
	m.sendLocked(r, msgChatSnapshot{Type: "chat:snapshot", Messages: frames, Before: before})
	m.sendLocked(r, msgDecisionsSnapshot{Type: "decisions:snapshot", Decisions: append([]Decision{}, r.cards.cards...)})
	cs := r.commentSyncLocked()
	m.sendLocked(r, msgCommentSync{Type: "comment:sync", Version: cs.Version, Threads: cs.Threads})
	r.broadcastLocked(msgPresence{Type: "session:presence", Members: len(r.members)})
	return m, nil
}

// Leave removes the socket from its room.
func (m *Member) Leave() {
	r := m.room
	r.mu.Lock()
	_, ok := r.members[m]
	delete(r.members, m)
	if ok {
		r.broadcastLocked(msgPresence{Type: "session:presence", Members: len(r.members)})
	}
	r.mu.Unlock()
	if ok {
		m.release()
	}
}

func (m *Member) sendLocked(r *Room, v any) { m.conn.Send(encode(v)) }

func (m *Member) canEditLocked(r *Room) bool { return m.who.CanEdit && !r.channel.Archived() }

// identityLocked is the member's identity with edit capability as the
// document's state allows: an archived document is read-only for everyone,
// though a manager keeps canManage to restore or delete it.
func (m *Member) identityLocked(r *Room) Identity {
	id := m.who
	id.CanEdit = m.canEditLocked(r)
	return id
}

// Receive handles one frame from the member's socket. Every failure is
// answered with an error message naming the request; nothing changes.
func (m *Member) Receive(ctx context.Context, frame []byte) {
	var env inEnvelope
	if err := textrule.JSON(frame); err != nil {
		// Decoding would replace the bad bytes with U+FFFD: refused, never
		// repaired. The id is still echoed when the frame has one.
		json.Unmarshal(frame, &env)
		m.reply(msgError{Type: "error", ID: env.ID, Code: CodeMalformed, Message: "This frame " + err.Error() + "; send JSON text in UTF-8."})
		return
	}
	if err := json.Unmarshal(frame, &env); err != nil || env.Type == "" {
		// A request's id is echoed whenever the frame has one, so the
		// sender can tell which of its requests failed.
		m.reply(msgError{Type: "error", ID: env.ID, Code: CodeMalformed, Message: "Each frame must be a JSON object with a string type."})
		return
	}
	reply, err := m.dispatch(ctx, env, frame)
	if err != nil {
		var re *Error
		if !errors.As(err, &re) {
			m.room.hub.logf(m.room).Error("room request failed", "type", env.Type, "err", err)
		}
		m.reply(errorReply(env.ID, err))
		return
	}
	if reply != nil {
		m.reply(reply)
	}
	if env.Type == "plan:push" {
		// Written once the acknowledgement is on its way.
		if f, ok := m.conn.(Flusher); ok {
			f.Flush()
		}
		m.room.checkpointIfDue(ctx)
	}
}

func (m *Member) dispatch(ctx context.Context, env inEnvelope, frame []byte) (any, error) {
	r := m.room
	switch env.Type {
	case "plan:open":
		return decoded(frame, func(in inPlanOpen) (any, error) {
			// The answer is queued before the lock is let go: a broadcast
			// of the next change must not reach the socket before the
			// answer that does not hold it.
			r.mu.Lock()
			defer r.mu.Unlock()
			switch reply := r.plan.openLocked(ctx, r, in.Epoch, in.Version).(type) {
			case msgPlanSnapshot:
				reply.ID = in.ID
				m.sendLocked(r, reply)
			case msgPlanUpdates:
				reply.ID = in.ID
				m.sendLocked(r, reply)
			default:
				panic("plan:open answers with a snapshot or updates")
			}
			return nil, nil
		})
	case "plan:push":
		return editing(m, frame, func(in inPlanPush) (any, error) {
			if len(in.Updates) > MaxPushUpdates {
				return nil, errorf(CodeInvalidChanges, "A push holds at most %d updates; this one has %d. Push the first %d, and the rest once they are acknowledged.",
					MaxPushUpdates, len(in.Updates), MaxPushUpdates)
			}
			for _, u := range in.Updates {
				if u.ClientID == "" || utf8.RuneCountInString(u.ClientID) > 128 || u.ClientID == serverClientID || u.ClientID == plannerClientID {
					return nil, errorf(CodeMalformed, "Every update needs a clientID of 1 to 128 characters other than %q and %q.", serverClientID, plannerClientID)
				}
			}
			for i := range in.Updates {
				in.Updates[i].Author = Author{Kind: AuthorPerson, Name: m.who.Login}
			}
			version, err := r.Push(ctx, in.Version, in.Updates)
			var re *Error
			if errors.As(err, &re) && re.Code == CodeStaleVersion {
				return msgError{Type: "error", ID: in.ID, Code: re.Code, Message: re.Message, Version: &version}, nil
			}
			return msgPlanAck{Type: "plan:ack", ID: in.ID, Version: version}, err
		})
	case "chat:send":
		return editing(m, frame, func(in inChatSend) (any, error) {
			if in.Command != nil {
				_, err := r.SayCommand(ctx, m.who, *in.Command, in.Text)
				return msgOK{Type: "ok", ID: in.ID}, err
			}
			_, err := r.Send(ctx, m.who, in.Text, in.Attachments, in.References)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "decision:answer":
		return editing(m, frame, func(in inDecisionAnswer) (any, error) {
			_, err := r.Answer(ctx, m.who, in.Decision, in.Answer)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "decision:cancel":
		return editing(m, frame, func(in inDecisionCancel) (any, error) {
			_, err := r.CancelDecision(ctx, m.who, in.Decision)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "decision:discard":
		return editing(m, frame, func(in inDecisionCancel) (any, error) {
			_, err := r.DiscardDecision(ctx, m.who, in.Decision)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "decision:reopen":
		return editing(m, frame, func(in inDecisionCancel) (any, error) {
			_, err := r.ReopenDecision(ctx, m.who, in.Decision)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "decision:draft":
		return editing(m, frame, func(in inDecisionDraft) (any, error) {
			return nil, m.relayDraft(in)
		})
	case "comment:sync":
		return decoded(frame, func(in inEnvelope) (any, error) {
			// Sent under the lock, so no later change reaches the socket first.
			r.mu.Lock()
			defer r.mu.Unlock()
			cs := r.commentSyncLocked()
			m.sendLocked(r, msgCommentSync{Type: "comment:sync", ID: in.ID, Version: cs.Version, Threads: cs.Threads})
			return nil, nil
		})
	case "comment:start":
		return editing(m, frame, func(in inCommentStart) (any, error) {
			t, err := r.StartThread(ctx, m.who, in.NewThread)
			return msgCommentStarted{Type: "comment:started", ID: in.ID, Thread: t.ID}, err
		})
	case "comment:reply":
		return editing(m, frame, func(in inCommentReply) (any, error) {
			_, err := r.ReplyThread(ctx, m.who, in.Thread, in.Text)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "comment:accept":
		return editing(m, frame, func(in inCommentThread) (any, error) {
			_, err := r.AcceptThread(ctx, m.who, in.Thread)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "comment:dismiss":
		return editing(m, frame, func(in inCommentThread) (any, error) {
			_, err := r.DismissThread(ctx, m.who, in.Thread)
			return msgOK{Type: "ok", ID: in.ID}, err
		})
	case "comment:typing":
		return editing(m, frame, func(in inCommentThread) (any, error) {
			return nil, m.typing(in.Thread)
		})
	}
	return nil, errorf(CodeUnknownType, "This server does not know the message type %q.", env.Type)
}

// decoded decodes a frame strictly into T and hands it to fn.
func decoded[T any](frame []byte, fn func(T) (any, error)) (any, error) {
	var in T
	if err := decodeFrame(frame, &in); err != nil {
		return nil, err
	}
	return fn(in)
}

// editing is decoded for a request that changes the document: the member must
// be allowed to edit, and fn's reply is sent only when it succeeded.
func editing[T any](m *Member, frame []byte, fn func(T) (any, error)) (any, error) {
	return decoded(frame, func(in T) (any, error) {
		if err := m.checkEdit(); err != nil {
			return nil, err
		}
		reply, err := fn(in)
		if err != nil {
			return nil, err
		}
		return reply, nil
	})
}

func (m *Member) checkEdit() error {
	if !m.who.CanEdit {
		return errorf(CodeReadOnly, "You can read this document but not change it.")
	}
	return nil
}

func (m *Member) reply(v any) { m.conn.Send(encode(v)) }

// decodeFrame decodes strictly: an unknown field is refused.
func decodeFrame(frame []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(CodeMalformed, "This frame does not have the shape its type needs: %v.", err)
	}
	return nil
}

func errorReply(id string, err error) msgError {
	var re *Error
	if errors.As(err, &re) {
		return msgError{Type: "error", ID: id, Code: re.Code, Message: re.Message}
	}
	var fe *fault.Error
	if errors.As(err, &fe) && (fe.Kind == fault.StorageFull || fe.Kind == fault.StorageUnavailable) {
		return msgError{Type: "error", ID: id, Code: fe.Code, Message: fe.Message}
	}
	return msgError{Type: "error", ID: id, Code: CodeInternal, Message: "Chopin could not do this because of an internal error; the log has the details."}
}
