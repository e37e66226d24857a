package room

import (
	"context"
	"errors"
	"fmt"
)

// Retrying a failed turn (retry-turn): the failed attempt, one Planner reply
// holding its partial text, its tool rows and its failure line, leaves the
// transcript for everyone, and the person's message runs again.

// messageRemover is a Persister that can delete a message; the app's store is one.
type messageRemover interface {
	DeleteMessage(ctx context.Context, channelID, id string) error
}

// RemoveReply takes a finished Planner reply out of Chat: it is deleted,
// and every member is sent chat:removed. A reply still streaming is refused.
func (r *Room) RemoveReply(ctx context.Context, id string) error {
	rm, ok := r.hub.persist.(messageRemover)
	if !ok {
		return errors.New("room: this store cannot remove messages")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, streaming := r.replies[id]; streaming {
		return ErrReplyStreaming
	}
	if err := rm.DeleteMessage(ctx, r.channelID, id); err != nil {
		return fmt.Errorf("remove reply: %w", err)
	}
	r.broadcastLocked(msgChatRemoved{Type: "chat:removed", Message: id})
	return nil
}

// ErrReplyStreaming refuses to remove a reply whose turn is still running.
var ErrReplyStreaming = errors.New("room: the reply is still streaming")

type msgChatRemoved struct {
	Type    string `json:"type"` // chat:removed
	Message string `json:"message"`
}
