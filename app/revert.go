package app

// Revert of one change, or of one Planner turn, as one new change on top
// (room/revert.go works it out and applies it): POST
// …/versions/:version/revert and …/turns/:turn/revert.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// revertTries is how many times a revert is worked out again when the plan
// moves on while it is (another edit landing in between).
const revertTries = 5

func (a *App) handleVersionRevert(c echo.Context) error {
	if err := a.canWrite(c); err != nil {
		return err
	}
	v, err := versionParam(c)
	if err != nil {
		return err
	}
	return a.revert(c, false, func(ctx context.Context, channelID string) ([]int64, error) {
		return []int64{v}, nil
	})
}

func (a *App) handleTurnRevert(c echo.Context) error {
	if err := a.canWrite(c); err != nil {
		return err
	}
	turn := c.Param("turn")
	if c.Request().URL.RawPath != "" { // the router matched the escaped path
		if t, err := url.PathUnescape(turn); err == nil {
			turn = t
		}
	}
	return a.revert(c, true, func(ctx context.Context, channelID string) ([]int64, error) {
		vs, err := a.store.HistoryTurn(ctx, channelID, turn)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			return nil, &fault.Error{Kind: fault.NotFound, Code: "turn-not-found",
				Message: "No change of this plan's kept history was made in the Planner's turn " + strconv.Quote(turn) +
					": it changed nothing, or its detail is pruned. List the versions with GET …/versions."}
		}
		return vs, nil
	})
}

// revert undoes the versions targets names (a Planner turn's when turn),
// together, as one new change on top, and answers the plan.
func (a *App) revert(c echo.Context, turn bool, targets func(ctx context.Context, channelID string) ([]int64, error)) error {
	ctx := c.Request().Context()
	return a.withRoom(c, func(ch store.Channel, r *room.Room) error {
		vs, err := targets(ctx, ch.ID)
		if err != nil {
			return err
		}
		for try := 0; ; try++ {
			err = a.revertOnce(ctx, ch.ID, r, vs, turn)
			if !errors.Is(err, room.ErrRevertMoved) || try == revertTries-1 {
				break
			}
		}
		var ce *room.RevertConflictError
		switch {
		case errors.As(err, &ce):
			return c.JSON(http.StatusConflict, map[string]any{"code": room.RevertConflictCode, "message": ce.Message, "conflicts": ce.Conflicts})
		case errors.Is(err, room.ErrRevertMoved):
			return &fault.Error{Kind: fault.Conflict, Code: "stale-revision",
				Message: "The plan kept changing while the revert was worked out; try again in a moment."}
		case err != nil:
			return err
		}
		return c.JSON(http.StatusOK, r.Plan())
	})
}

// revertOnce works the revert of vs (oldest first) out against the plan's
// current version and applies it.
func (a *App) revertOnce(ctx context.Context, channelID string, r *room.Room, vs []int64, turn bool) error {
	now, _ := r.Source()
	first, last := vs[0], vs[len(vs)-1]
	if first < 1 {
		return a.noChangeToRevert(first, first)
	}
	if last > now {
		return a.versionGone(ctx, channelID, last)
	}
	es, err := a.store.HistoryChanges(ctx, channelID, first, now)
	if err != nil {
		return err
	}
	// Every version from the first undone through now must keep its
	// change: what it cannot be carried through is not undone.
	changes := make([]room.HistoryChange, 0, len(es))
	for i, e := range es {
		want := first + int64(i)
		if e.Version != want {
			return a.noChangeToRevert(first, want)
		}
		if len(e.Changes) == 0 || e.Changes[0] != '[' {
			return a.noChangeToRevert(first, e.Version)
		}
		changes = append(changes, room.HistoryChange{Version: e.Version, Time: e.At, Author: room.Author(e.Author), Changes: e.Changes})
	}
	switch {
	case len(changes) == 0:
		return a.noChangeToRevert(first, first)
	case int64(len(changes)) != now-first+1:
		return room.ErrRevertMoved // the room is past what was read: it moved on meanwhile
	}
	base, err := a.versionText(ctx, channelID, first-1)
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Code == "version-not-found" {
			return a.noChangeToRevert(first, first-1)
		}
		return err
	}
	undo := make(map[int64]bool, len(vs))
	for _, v := range vs {
		undo[v] = true
	}
	cs, conflicts, err := room.RevertChanges(base, changes, func(h room.HistoryChange) bool { return undo[h.Version] })
	if err != nil {
		return fmt.Errorf("revert of version %d: %w", first, err)
	}
	who := a.identity()
	byVersion := make(map[int64]room.HistoryChange, len(changes))
	for _, h := range changes {
		byVersion[h.Version] = h
	}
	h := byVersion[first]
	subject := "Revision " + strconv.FormatInt(first, 10)
	if turn {
		subject = "The Planner's turn of " + clock(h.Time) + " (" + room.Revisions(vs) + ")"
	}
	if len(conflicts) > 0 {
		return &room.RevertConflictError{Message: room.RevertConflictMessage(subject, conflicts, who), Conflicts: conflicts}
	}
	name := who.Name
	if name == "" {
		name = who.Login
	}
	notice := fmt.Sprintf("%s reverted revision %d (%s change at %s).", name, first, possessive(room.AuthorName(h.Author, who)), clock(h.Time))
	if turn {
		notice = fmt.Sprintf("%s reverted the Planner's turn of %s (%s).", name, clock(h.Time), room.Revisions(vs))
	}
	_, err = r.Revert(ctx, who, now, cs, notice)
	return err
}

// noChangeToRevert is the refusal of a revert of version v whose change,
// or the change of version at on the way to now (at == v-1: the text
// before v), the history does not keep.
func (a *App) noChangeToRevert(v, at int64) error {
	msg := ""
	switch {
	case v == 0:
		msg = "Version 0 is where this plan's history starts: no change made it, so there is nothing to undo."
	case at == v:
		msg = "The history keeps no change for version " + strconv.FormatInt(v, 10) +
			" of this plan that could be undone: it was never made, or its detail is pruned. List the versions with GET …/versions."
	case at == v-1:
		msg = fmt.Sprintf("Version %d cannot be undone: the history no longer keeps the text before it (version %d). Restore an earlier version instead.", v, at)
	default:
		msg = fmt.Sprintf("Version %d cannot be undone: the history does not keep the change of version %d after it, which the undo would have to be carried through. Restore an earlier version instead.", v, at)
	}
	return &fault.Error{Kind: fault.NotFound, Code: "version-not-found", Message: msg}
}

// clock is a time as the history's notices say it: "14:02" today, else
// with its date.
func clock(ms int64) string {
	t := time.UnixMilli(ms).Local()
	if t.Format(time.DateOnly) == time.Now().Format(time.DateOnly) {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// possessive is a name's possessive: "the Planner's", "Ada's".
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}
