package plannerhost

import (
	"context"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/room"
)

// Retrying a failed turn (retry-turn). Retry is not a new message: Chat keeps
// the person's message, takes the failed attempt (one Planner reply holding
// its partial text, tool rows and failure line) out of the transcript for
// everyone, and runs the message's turn again in a fresh session. The turn
// names the message it answers, and says retry, to a client granted the
// feature; agentconn leaves both out for any other client, which still gets a
// clean context, since the attempt is no longer in the transcript.

// recordAttempt saves replyID as the latest reply to a person's message
// (store migration 006), so a retry finds it after a restart too.
func (h *Host) recordAttempt(ctx context.Context, doc, messageID, replyID string) {
	if err := h.store.SaveReplyTo(ctx, doc, messageID, replyID); err != nil {
		h.log.Error("record the reply to a message", "channel", doc, "err", err)
	}
}

// Retry runs the turn of a person's message m again, once app has taken
// its failed reply out of Chat. It is refused as Turn is.
func (h *Host) Retry(ctx context.Context, ch room.Channel, m room.Message) error {
	return h.Turn(withRetry(ctx), ch, m)
}

type retryKey struct{}

func withRetry(ctx context.Context) context.Context { return context.WithValue(ctx, retryKey{}, true) }

func isRetry(ctx context.Context) bool { v, _ := ctx.Value(retryKey{}).(bool); return v }

// chatTurn names the Chat message a turn answers, and whether it runs it again.
// A command's message has the command's prompt.
func (h *Host) chatTurn(ctx context.Context, documentID string, m room.Message, req *agentconn.TurnRequest) {
	if m.Role == room.RolePerson && m.ID != "" {
		req.ChatMessage, req.Retry = m.ID, isRetry(ctx)
	}
	if cmd, args, ok := h.commandOf(documentID, m.Text); ok {
		req.Prompt = commandPrompt(cmd, args)
	}
	h.turnFiles(documentID, m, req)
}
