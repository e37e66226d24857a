package app

// The store as the rooms' CommentStore.

import (
	"context"
	"encoding/json"

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
		if out[i], err = roomThread(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// roomThread is a stored thread as the room holds it.
func roomThread(t store.CommentThread) (room.Thread, error) {
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
			return room.Thread{}, err
		}
	}
	return th, nil
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
