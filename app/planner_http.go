package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// The document's Planner over HTTP: its state and run cards, Stop Planner
// and Resume Planner, the choice of model, and retrying a failed turn. The
// room shows the same state as planner:status, planner:runs and chat:model;
// plannerhost does the work.

func (a *App) handlePlannerGet(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.planner.Status(ch.ID))
}

func (a *App) handlePlannerStop(c echo.Context) error {
	return a.plannerControl(c, a.planner.Stop) // Chat says what it did
}

func (a *App) handlePlannerResume(c echo.Context) error {
	return a.plannerControl(c, a.planner.Resume)
}

// controlJSON is what Stop or Resume achieved: whether the running turn was
// aborted, and each session's answer ("answered": false when the Planner
// did not answer within 10 seconds).
type controlJSON struct {
	Aborted bool                `json:"aborted"`
	Results []controlAnswerJSON `json:"results"`
	// Held: the Planner's link dropped with its work kept; the Stop is sent
	// first when its client resumes (resumable-sessions).
	Held bool `json:"held,omitempty"`
}

type controlAnswerJSON struct {
	Session  string `json:"session"`
	Run      string `json:"run,omitempty"`
	Answered bool   `json:"answered"`
	OK       bool   `json:"ok"`
	Message  string `json:"message,omitempty"`
}

func (a *App) plannerControl(c echo.Context, control func(ctx context.Context, documentID, run string) (agentconn.ControlOutcome, error)) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	var req struct {
		Run string `json:"run"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	out, err := control(c.Request().Context(), ch.ID, req.Run)
	if errors.Is(err, agentconn.ErrNotAttached) {
		return a.notAttached(c.Request().Context(), ch)
	}
	if err != nil {
		return err
	}
	res := controlJSON{Aborted: out.Aborted, Results: []controlAnswerJSON{}, Held: out.Held}
	for _, r := range out.Results {
		res.Results = append(res.Results, controlAnswerJSON(r))
	}
	return c.JSON(http.StatusOK, res)
}

// notAttached is the 409 of a request that needs an attached Planner, in the
// spec's words.
func (a *App) notAttached(ctx context.Context, ch store.Channel) error {
	message := "No Planner is attached to this document."
	if tr := a.agent.Refusal(ctx, ch.ID); tr != nil && tr.Code == agentconn.CodePlannerNotAttached {
		message = tr.Message
	}
	return httpError(http.StatusConflict, agentconn.CodePlannerNotAttached, message)
}

func (a *App) handlePlannerModelGet(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.planner.ModelState(ch.ID))
}

// handlePlannerModel is PUT .../planner/model {model?, thinkingLevel?}: the
// document's choice, checked against the attached client's last catalog. {}
// returns to the client's default.
func (a *App) handlePlannerModel(c echo.Context) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	var req struct {
		Model         *string `json:"model"`
		ThinkingLevel *string `json:"thinkingLevel"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	if req.Model != nil && *req.Model == "" || req.ThinkingLevel != nil && *req.ThinkingLevel == "" {
		return badRequest("invalid-argument", "model and thinkingLevel, when given, name a model and a level of the catalog; leave one out for the default.")
	}
	cat := a.agent.Catalog(ch.ID)
	if cat == nil {
		return httpError(http.StatusConflict, "no-catalog", "The attached Planner offers no choice of model: its client reported no catalog.")
	}
	var choice store.ModelChoice
	if req.Model != nil {
		m, ok := cat.Model(*req.Model)
		if !ok {
			return httpError(http.StatusConflict, "model-unavailable", fmt.Sprintf("The Planner's client does not offer the model %q.", *req.Model))
		}
		choice.Model, choice.ModelName = m.ID, m.Name
	}
	if req.ThinkingLevel != nil {
		of := choice.Model
		if of == "" {
			of = a.planner.DefaultModel(cat)
		}
		m, ok := cat.Model(of)
		if !ok || !slices.Contains(m.ThinkingLevels, *req.ThinkingLevel) {
			return httpError(http.StatusConflict, "thinking-level-unavailable", fmt.Sprintf("The model %q offers no thinking level %q.", of, *req.ThinkingLevel))
		}
		choice.ThinkingLevel = *req.ThinkingLevel
	}
	if err := a.store.SaveModelChoice(c.Request().Context(), ch.ID, choice); err != nil {
		return err
	}
	a.planner.ShowModel(ch.ID)
	return c.JSON(http.StatusOK, a.planner.ModelState(ch.ID))
}

// attemptOf reads the latest reply recorded for a person's message; "" when
// none was, and the transcript is read instead.
func (a *App) attemptOf(ctx context.Context, doc, messageID string) string {
	id, err := a.store.ReplyTo(ctx, doc, messageID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		a.log.Error("read the reply to a message", "channel", doc, "err", err)
	}
	return id
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
		return httpError(http.StatusConflict, agentconn.CodePlannerBusy, agentconn.MsgBusy)
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
