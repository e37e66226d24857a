package plannerhost

import (
	"context"
	"errors"
	"strings"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// A person's @chopin message while the Planner works (steer-turn): the
// message is already in Chat, and goes to the running turn as a steer, to be
// read at its next step. Nothing is kept for a later turn: a refusal is
// final, and Chat says the message was not read. A client without the
// feature never gets here: the room refused the message first, in the
// spec's words.

// steer hands m to the running turn when StartTurn found the Planner busy
// and its client takes steers. It reports whether it took m over.
func (h *Host) steer(ctx context.Context, ch room.Channel, m room.Message, startErr error) bool {
	var tr *agentconn.TurnRefused
	if !errors.As(startErr, &tr) || tr.Code != agentconn.CodePlannerBusy || !h.agent.Granted(ch.ID, wire.FeatureSteerTurn) || isRetry(ctx) {
		return false
	}
	if _, _, command := h.commandOf(ch.ID, m.Text); command {
		// A command is a turn of its own, never a steer.
		return false
	}
	h.replies.Add(1) // shutdown waits for the answer, as for a reply
	go func() {
		defer h.replies.Done()
		ctx := context.WithoutCancel(ctx)
		out, err := h.agent.Steer(ctx, ch.ID, h.steerPrompt(m))
		switch {
		case errors.Is(err, agentconn.ErrNoTurn):
			// The turn ended meanwhile: the message starts one of its own.
			if err := h.Turn(ctx, ch, m); err != nil {
				h.notRead(ctx, ch.ID, m, err.Error())
			}
		case err != nil:
			reason := "the Planner could not take it"
			var re *agentconn.TurnRefused
			if errors.As(err, &re) {
				reason = re.Message
			}
			h.notRead(ctx, ch.ID, m, reason)
		case !out.Answered:
			h.notRead(ctx, ch.ID, m, "the Planner did not answer within 10 seconds")
		case !out.OK:
			reason := out.Message
			if reason == "" {
				reason = "the Planner did not take it"
			}
			h.notRead(ctx, ch.ID, m, reason)
		}
	}()
	return true
}

// notRead says in Chat that a message sent while the Planner worked was not
// read; it is not sent again.
func (h *Host) notRead(ctx context.Context, doc string, m room.Message, reason string) {
	if r, ok := h.hub.Room(doc); ok {
		r.Notice(ctx, "The Planner did not read @"+m.Author+"'s message while it worked, and it will not be sent again: "+strings.TrimSuffix(reason, ".")+". Send it again once the Planner has replied.")
	}
}
