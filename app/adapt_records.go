package app

// The store as an import's room.HeldRecords: the decision cards and
// accepted comments a file's record lines name, in whichever document of
// this Chopin they were made.

import (
	"context"
	"errors"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

type heldRecords struct{ s *store.Store }

var _ room.HeldRecords = heldRecords{}

func (h heldRecords) Decision(ctx context.Context, id string) (room.Decision, bool, error) {
	d, err := h.s.Decision(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return room.Decision{}, false, nil
	}
	if err != nil {
		return room.Decision{}, false, err
	}
	rd, err := roomDecision(d)
	return rd, err == nil, err
}

// Thread finds an accepted thread: only those have a <Comment /> line.
func (h heldRecords) Thread(ctx context.Context, id string) (room.Thread, bool, error) {
	t, err := h.s.CommentThread(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && t.Status != room.ThreadAccepted {
		return room.Thread{}, false, nil
	}
	if err != nil {
		return room.Thread{}, false, err
	}
	rt, err := roomThread(t)
	return rt, err == nil, err
}
