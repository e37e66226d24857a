package app

// Comment threads over HTTP (docs/http-api.md, "Comments") and the store
// as the rooms' CommentStore: the same requests as the room socket's
// comment:* messages, for scripts and tests.

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// commentStore is the store as the rooms' CommentStore; a placement (an
// accepted thread's <Comment> line) schedules the description as any plan
// change does.
type commentStore struct {
	s *store.Store
	a *App
}

var _ room.CommentStore = commentStore{}

func (p commentStore) Threads(ctx context.Context, channelID string) ([]room.Thread, error) {
	ts, err := p.s.CommentThreads(ctx, channelID)
	if err != nil {
		return nil, err
	}
	out := make([]room.Thread, len(ts))
	for i, t := range ts {
		th := room.Thread{ID: t.ID, ChannelID: t.ChannelID, Status: t.Status,
			Passage: room.Passage{From: t.From, To: t.To, Version: t.AnchorVersion, State: t.AnchorState, Quote: t.Quote},
			Notes:   make([]room.CommentNote, len(t.Notes)), CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt,
			UpdatedAt: t.UpdatedAt, DecidedBy: t.DecidedBy, DecidedAt: t.DecidedAt}
		for _, b := range t.Blocks {
			th.Passage.Blocks = append(th.Passage.Blocks, room.BlockRef(b))
		}
		for j, n := range t.Notes {
			th.Notes[j] = room.CommentNote(n)
		}
		if len(t.Result) > 0 {
			th.Result = new(room.ThreadResult)
			if err := json.Unmarshal(t.Result, th.Result); err != nil {
				return nil, err
			}
		}
		out[i] = th
	}
	return out, nil
}

func (p commentStore) SaveThreads(ctx context.Context, channelID string, threads []room.Thread, placement []room.Update) error {
	ts := make([]store.CommentThread, len(threads))
	for i, t := range threads {
		st := store.CommentThread{ID: t.ID, ChannelID: channelID, Status: t.Status, From: t.Passage.From, To: t.Passage.To,
			AnchorVersion: t.Passage.Version, AnchorState: t.Passage.State, Quote: t.Passage.Quote, CreatedBy: t.CreatedBy,
			CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, DecidedBy: t.DecidedBy, DecidedAt: t.DecidedAt,
			Notes: make([]store.CommentNote, len(t.Notes))}
		for _, b := range t.Passage.Blocks {
			st.Blocks = append(st.Blocks, store.CommentBlock(b))
		}
		for j, n := range t.Notes {
			st.Notes[j] = store.CommentNote(n)
		}
		if t.Result != nil {
			raw, err := json.Marshal(t.Result)
			if err != nil {
				return err
			}
			st.Result = raw
		}
		ts[i] = st
	}
	err := storageErr(p.s.SaveCommentThreads(ctx, channelID, ts, storeUpdates(placement)))
	if err == nil && len(placement) > 0 && p.a != nil {
		p.a.describer.edited(channelID)
	}
	return err
}

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
