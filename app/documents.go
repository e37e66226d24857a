package app

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// The HTTP equivalents of the room protocol: the same rooms, the same rules.

// withRoom resolves the route's document and runs fn on its room.
func (a *App) withRoom(c echo.Context, fn func(store.Channel, *room.Room) error) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	return a.hub.Do(c.Request().Context(), a.roomChannel(ch), func(r *room.Room) error { return fn(ch, r) })
}

func (a *App) handlePlanGet(c echo.Context) error {
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		return c.JSON(http.StatusOK, r.Plan())
	})
}

func (a *App) handlePlanPut(c echo.Context) error {
	var req struct {
		Revision *int64  `json:"revision"`
		Source   *string `json:"source"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	if req.Revision == nil || req.Source == nil {
		return badRequest("invalid-argument", `Send {"revision": <the revision you edited>, "source": "<the whole new plan>"}.`)
	}
	if err := a.canWrite(c); err != nil {
		return err
	}
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		if _, err := r.ReplaceText(c.Request().Context(), *req.Revision, *req.Source); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, r.Plan())
	})
}

func (a *App) handleMessageCreate(c echo.Context) error {
	var req struct {
		Text        string                  `json:"text"`
		Command     *room.ChatCommand       `json:"command"`     // a command the attached client reported
		Attachments []room.AttachmentUpload `json:"attachments"` // files sent with it, for the turn
		References  []room.ReferenceRequest `json:"references"`  // documents it refers to
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	if err := a.canWrite(c); err != nil {
		return err
	}
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		say := func(ctx context.Context, who room.Identity, text string) (room.Message, error) {
			return r.Send(ctx, who, text, req.Attachments, req.References)
		}
		if req.Command != nil {
			say = func(ctx context.Context, who room.Identity, text string) (room.Message, error) {
				return r.SayCommand(ctx, who, *req.Command, text)
			}
		}
		m, err := say(c.Request().Context(), a.identity(), req.Text)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, m)
	})
}

func (a *App) handleDecisionList(c echo.Context) error {
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		return c.JSON(http.StatusOK, map[string]any{"decisions": r.Decisions()})
	})
}

func (a *App) handleDecisionAnswer(c echo.Context) error {
	var answer room.CardAnswer
	if err := bindStrict(c, &answer); err != nil {
		return err
	}
	if err := a.canWrite(c); err != nil {
		return err
	}
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		d, err := r.Answer(c.Request().Context(), a.identity(), c.Param("decisionId"), answer)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, d)
	})
}

func (a *App) handleDecisionCancel(c echo.Context) error {
	return a.decisionChange(c, (*room.Room).CancelDecision)
}

func (a *App) handleDecisionDiscard(c echo.Context) error {
	return a.decisionChange(c, (*room.Room).DiscardDecision)
}

func (a *App) handleDecisionReopen(c echo.Context) error {
	return a.decisionChange(c, (*room.Room).ReopenDecision)
}

// decisionChange runs a change to one card that takes no body.
func (a *App) decisionChange(c echo.Context, change func(*room.Room, context.Context, room.Identity, string) (room.Decision, error)) error {
	if err := a.canWrite(c); err != nil {
		return err
	}
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		d, err := change(r, c.Request().Context(), a.identity(), c.Param("decisionId"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, d)
	})
}
