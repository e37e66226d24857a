package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/store"
)

// The document's Planner over HTTP: its state and run cards, Stop Planner
// and Resume Planner. The room shows the same state as planner:status and
// planner:runs; plannerhost does the work.

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
