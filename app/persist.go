package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// roomStore is the store as a room's Persister: it only converts between
// the two packages' types, which mirror each other.
type roomStore struct{ s *store.Store }

var _ room.Persister = roomStore{}

func (p roomStore) LoadPlan(ctx context.Context, channelID string) (room.PlanRecord, error) {
	rec, err := p.s.LoadPlan(ctx, channelID)
	if err != nil {
		return room.PlanRecord{}, err
	}
	out := room.PlanRecord{Exists: rec.Exists, Checkpoint: room.Checkpoint(rec.Checkpoint)}
	for _, u := range rec.Journal {
		out.Journal = append(out.Journal, room.Update(u))
	}
	return out, nil
}

func (p roomStore) CommitPlan(ctx context.Context, channelID string, updates []room.Update) error {
	return p.s.CommitPlan(ctx, channelID, storeUpdates(updates))
}

func (p roomStore) CheckpointPlan(ctx context.Context, channelID string, cp room.Checkpoint) error {
	return p.s.CheckpointPlan(ctx, channelID, store.PlanCheckpoint(cp))
}

func (p roomStore) Messages(ctx context.Context, channelID string, limit int) ([]room.Message, error) {
	ms, err := p.s.Messages(ctx, channelID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]room.Message, len(ms))
	for i, m := range ms {
		out[i] = room.Message(m)
	}
	return out, nil
}

func (p roomStore) SaveMessage(ctx context.Context, m room.Message) error {
	return p.s.SaveMessage(ctx, store.Message(m))
}

func (p roomStore) Decisions(ctx context.Context, channelID string) ([]room.Decision, error) {
	ds, err := p.s.Decisions(ctx, channelID)
	if err != nil {
		return nil, err
	}
	out := make([]room.Decision, len(ds))
	for i, d := range ds {
		out[i] = room.Decision{ID: d.ID, ChannelID: d.ChannelID, Request: d.Request, Index: d.Index, Call: d.Call,
			Status: d.Status, AnsweredBy: d.AnsweredBy, Block: d.Block, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
		if len(d.Answer) > 0 {
			out[i].Answer = new(room.CardAnswer)
			if err := json.Unmarshal(d.Answer, out[i].Answer); err != nil {
				return nil, fmt.Errorf("decision %s: stored answer: %w", d.ID, err)
			}
		}
	}
	return out, nil
}

func (p roomStore) SaveDecisions(ctx context.Context, channelID string, cards []room.Decision, placement []room.Update) error {
	out := make([]store.Decision, len(cards))
	for i, d := range cards {
		out[i] = store.Decision{ID: d.ID, ChannelID: channelID, Request: d.Request, Index: d.Index, Call: d.Call,
			Status: d.Status, AnsweredBy: d.AnsweredBy, Block: d.Block, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
		if d.Answer != nil {
			out[i].Answer, _ = json.Marshal(d.Answer) // a struct of strings always encodes
		}
	}
	return p.s.SaveDecisions(ctx, channelID, out, storeUpdates(placement))
}

func storeUpdates(us []room.Update) []store.PlanUpdate {
	out := make([]store.PlanUpdate, len(us))
	for i, u := range us {
		out[i] = store.PlanUpdate(u)
	}
	return out
}
