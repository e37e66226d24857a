package plannerhost

import (
	"context"
	"errors"
	"strings"

	"github.com/chopin-desktop/chopin/agentconn"
)

// What Chat says of Stop Planner and Resume Planner (spec/agent-connection.md,
// "Resuming after a dropped link", "Stop is held, not lost"): a Stop stopped
// the Planner only when the client confirmed it; one held for a disconnected
// Planner was asked for, and its workflows pause when the machine
// reconnects; one the client did not answer in time was not confirmed, and
// the same holds. A Stop that withdrew the questions a Planner only waited
// on says so. A Resume on a disconnected Planner is not held: Chat says the
// workflows could not be resumed. Nothing is said when a link drops.

const (
	msgStopHeld        = " asked the Planner to stop, but its machine is disconnected. Its workflows will pause when the machine reconnects."
	msgStopUnconfirmed = " asked the Planner to stop, but the Planner has not confirmed it. Its workflows will pause when the machine reconnects."
	msgStopWithdrew    = " The Planner no longer waits on its open question: the question was withdrawn."
	msgResumeNotHeld   = " asked the Planner to resume, but its machine is disconnected, so the workflows could not be resumed. Press Resume again once the machine is back."
)

// Stop is Stop Planner, followed by its Chat line.
func (h *Host) Stop(ctx context.Context, documentID, run string) (agentconn.ControlOutcome, error) {
	out, err := h.agent.Stop(ctx, documentID, run)
	if err == nil {
		if line := stopLine(h.login, out); line != "" {
			h.notice(context.WithoutCancel(ctx), documentID, line)
		}
	}
	return out, err
}

// Resume is Resume Planner; one a disconnected Planner could not take is
// said in Chat.
func (h *Host) Resume(ctx context.Context, documentID, run string) (agentconn.ControlOutcome, error) {
	disconnected := h.agent.Status(documentID).State == agentconn.PlannerDisconnected
	out, err := h.agent.Resume(ctx, documentID, run)
	if errors.Is(err, agentconn.ErrNotAttached) && disconnected {
		h.notice(context.WithoutCancel(ctx), documentID, "@"+h.login+msgResumeNotHeld)
	}
	return out, err
}

// stopLine is what Chat says of a Stop by who, or "" when it did nothing.
func stopLine(who string, out agentconn.ControlOutcome) string {
	var b strings.Builder
	unanswered, refused := false, ""
	for _, r := range out.Results {
		switch {
		case !r.Answered:
			unanswered = true
		case !r.OK && refused == "":
			refused = r.Message
			if refused == "" {
				refused = "it gave no reason"
			}
		}
	}
	switch {
	case out.Held && len(out.Results) > 0:
		b.WriteString("@" + who + msgStopHeld)
	case unanswered:
		b.WriteString("@" + who + msgStopUnconfirmed)
	case refused != "":
		b.WriteString("@" + who + " asked the Planner to stop, but the Planner did not confirm it: " + strings.TrimSuffix(refused, ".") + ".")
	case len(out.Results) > 0 || out.Aborted || len(out.Withdrawn) > 0:
		b.WriteString("@" + who + " stopped the Planner.")
	}
	if len(out.Withdrawn) > 0 {
		b.WriteString(msgStopWithdrew)
	}
	return b.String()
}

// notice posts a system line in the document's Chat.
func (h *Host) notice(ctx context.Context, documentID, text string) {
	ch, err := h.docs.Document(ctx, documentID)
	if err != nil {
		h.log.Error("post a Chat line", "channel", documentID, "err", err)
		return
	}
	r, release, err := h.hub.Acquire(ctx, ch)
	if err != nil {
		h.log.Error("post a Chat line", "channel", documentID, "err", err)
		return
	}
	defer release()
	r.Notice(ctx, text)
}
