package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// Retrying a failed turn (retry-turn). Retry is not a new message: Chat keeps
// the person's message, takes the failed attempt (one Planner reply holding
// its partial text, tool rows and failure line) out of the transcript for
// everyone, and has plannerhost run the message's turn again in a fresh
// session.

// attemptOf reads the latest reply recorded for a person's message; "" when
// none was, and the transcript is read instead.
func (a *App) attemptOf(ctx context.Context, doc, messageID string) string {
	id, err := a.store.ReplyTo(ctx, doc, messageID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		a.log.Error("read the reply to a message", "channel", doc, "err", err)
	}
	return id
}

// DeleteMessage lets the room take a retried reply out of Chat.
func (p roomStore) DeleteMessage(ctx context.Context, channelID, id string) error {
	return p.s.DeleteMessage(ctx, channelID, id)
}

// lastAttempt finds the reply that answered msgs[i]: the one recorded, or
// else the first Planner reply after it with no other message to the
// Planner in between (turns never overlap, and a steered message has no
// reply of its own).
func lastAttempt(msgs []store.Message, i int, recorded string) *store.Message {
	if recorded != "" {
		for j := i + 1; j < len(msgs); j++ {
			if msgs[j].ID == recorded {
				return &msgs[j]
			}
		}
		return nil
	}
	for j := i + 1; j < len(msgs); j++ {
		switch {
		case msgs[j].Role == room.RolePlanner:
			return &msgs[j]
		case msgs[j].Role == room.RolePerson && room.MentionsPlanner(msgs[j].Text):
			return nil
		}
	}
	return nil
}

// handleMessageRetry is POST .../messages/:messageId/retry.
func (a *App) handleMessageRetry(c echo.Context) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	id := c.Param("messageId")
	msgs, err := a.store.Messages(ctx, ch.ID, plannerhost.TranscriptWindow)
	if err != nil {
		return err
	}
	i := -1
	for j := range msgs {
		if msgs[j].ID == id {
			i = j
		}
	}
	if i < 0 {
		return httpError(http.StatusNotFound, "message-not-found", "No recent message of this document has the ID "+id+".")
	}
	m := msgs[i]
	if m.Role != room.RolePerson || !room.MentionsPlanner(m.Text) {
		return httpError(http.StatusConflict, "not-retriable", "Only a message to the Planner can be retried.")
	}
	failed := lastAttempt(msgs, i, a.attemptOf(ctx, ch.ID, m.ID))
	if failed == nil || failed.Status != room.ReplyFailed {
		return httpError(http.StatusConflict, "not-retriable", "Only a message whose reply failed can be retried.")
	}
	if ch.Archived() {
		return httpError(http.StatusConflict, room.CodeDocumentArchived, "This document is archived, so it is read-only. Restore it to change it.")
	}
	if tr := a.agent.Refusal(ctx, ch.ID); tr != nil {
		return httpError(http.StatusConflict, tr.Code, tr.Message)
	}
	if st := a.agent.Status(ch.ID); st.State == agentconn.PlannerAttached && a.agent.Busy(ch.ID) {
		return httpError(http.StatusConflict, agentconn.CodePlannerBusy, wire.MsgBusy)
	}
	rc := a.roomChannel(ch)
	r, release, err := a.hub.Acquire(ctx, rc)
	if err != nil {
		return err
	}
	defer release()
	if err := r.RemoveReply(ctx, failed.ID); err != nil {
		return err
	}
	if err := a.planner.Retry(ctx, rc, room.Message(m)); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"message": room.Message(m), "removed": failed.ID})
}
