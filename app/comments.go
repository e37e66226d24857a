package app

// Comment threads over HTTP (docs/http-api.md, "Comments"): the same
// requests as the room socket's comment:* messages, for scripts and tests.

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

func (a *App) handleCommentList(c echo.Context) error {
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		return c.JSON(http.StatusOK, r.CommentSync())
	})
}

func (a *App) handleCommentStart(c echo.Context) error {
	var in room.NewThread
	if err := bindStrict(c, &in); err != nil {
		return err
	}
	if err := a.canWrite(c); err != nil {
		return err
	}
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		t, err := r.StartThread(c.Request().Context(), a.identity(), in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, t)
	})
}

func (a *App) handleCommentReply(c echo.Context) error {
	var in struct {
		Text string `json:"text"`
	}
	if err := bindStrict(c, &in); err != nil {
		return err
	}
	return a.commentAction(c, func(ctx context.Context, r *room.Room, id string) (room.Thread, error) {
		return r.ReplyThread(ctx, a.identity(), id, in.Text)
	})
}

func (a *App) handleCommentAccept(c echo.Context) error {
	return a.commentAction(c, func(ctx context.Context, r *room.Room, id string) (room.Thread, error) {
		return r.AcceptThread(ctx, a.identity(), id)
	})
}

func (a *App) handleCommentDismiss(c echo.Context) error {
	return a.commentAction(c, func(ctx context.Context, r *room.Room, id string) (room.Thread, error) {
		return r.DismissThread(ctx, a.identity(), id)
	})
}

func (a *App) commentAction(c echo.Context, fn func(context.Context, *room.Room, string) (room.Thread, error)) error {
	if err := a.canWrite(c); err != nil {
		return err
	}
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		t, err := fn(c.Request().Context(), r, c.Param("threadId"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, t)
	})
}
