package app

// The store as the rooms' Persister and the Planner host's Storage. A
// committed plan change also schedules the document's description.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// The store as the other packages' storage: each says what it needs in
// interfaces of its own, in its own types, and these adapters only convert
// between those types and the store's, which mirror them.

// storageErr is err as a storage refusal when the disk failed it (full, an
// I/O error), so a room answers its sockets in those words; else err.
func storageErr(err error) error {
	if sf := store.StorageFault(err); sf != nil {
		return sf
	}
	return err
}

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
		out.Journal = append(out.Journal, room.Update{Version: u.Version, ClientID: u.ClientID, Changes: u.Changes})
	}
	return out, nil
}

func (p roomStore) CommitPlan(ctx context.Context, channelID string, updates []room.Update) error {
	return storageErr(p.s.CommitPlan(ctx, channelID, storeUpdates(updates)))
}

func (p roomStore) CheckpointPlan(ctx context.Context, channelID string, cp room.Checkpoint) error {
	return storageErr(p.s.CheckpointPlan(ctx, channelID, store.PlanCheckpoint(cp)))
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

// SaveMessage saves a message, and with it the documents it refers to, the
// index read_reference and "Referenced by" read.
func (p roomStore) SaveMessage(ctx context.Context, m room.Message) error {
	refs := room.MessageReferences(m)
	if len(refs) == 0 {
		return storageErr(p.s.SaveMessage(ctx, store.Message(m)))
	}
	kept := make([]store.Reference, len(refs))
	for i, r := range refs {
		kept[i] = store.Reference{ChannelID: r.ChannelID, Label: r.Label, ObservedRevision: r.ObservedRevision, ObservedHash: r.ObservedSourceHash}
	}
	return storageErr(p.s.SaveMessageReferences(ctx, store.Message(m), kept))
}

func (p roomStore) Decisions(ctx context.Context, channelID string) ([]room.Decision, error) {
	ds, err := p.s.Decisions(ctx, channelID)
	if err != nil {
		return nil, err
	}
	out := make([]room.Decision, len(ds))
	for i, d := range ds {
		if out[i], err = roomDecision(d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// roomDecision is a stored card as the room holds it.
func roomDecision(d store.Decision) (room.Decision, error) {
	out := room.Decision{ID: d.ID, ChannelID: d.ChannelID, Request: d.Request, Index: d.Index, Call: d.Call,
		Status: d.Status, AnsweredBy: d.AnsweredBy, Block: d.Block, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		DiscardedBy: d.DiscardedBy}
	if len(d.Answer) > 0 {
		out.Answer = new(room.CardAnswer)
		if err := json.Unmarshal(d.Answer, out.Answer); err != nil {
			return room.Decision{}, fmt.Errorf("decision %s: stored answer: %w", d.ID, err)
		}
	}
	if len(d.Previous) > 0 {
		if err := json.Unmarshal(d.Previous, &out.Previous); err != nil {
			return room.Decision{}, fmt.Errorf("decision %s: stored previous answers: %w", d.ID, err)
		}
	}
	return out, nil
}

func (p roomStore) SaveDecisions(ctx context.Context, channelID string, cards []room.Decision, placement []room.Update) error {
	out := make([]store.Decision, len(cards))
	for i, d := range cards {
		out[i] = store.Decision{ID: d.ID, ChannelID: channelID, Request: d.Request, Index: d.Index, Call: d.Call,
			Status: d.Status, AnsweredBy: d.AnsweredBy, Block: d.Block, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
			DiscardedBy: d.DiscardedBy}
		if d.Answer != nil {
			out[i].Answer, _ = json.Marshal(d.Answer) // a struct of strings always encodes
		}
		if len(d.Previous) > 0 {
			out[i].Previous, _ = json.Marshal(d.Previous)
		}
	}
	return storageErr(p.s.SaveDecisions(ctx, channelID, out, storeUpdates(placement)))
}

func storeUpdates(us []room.Update) []store.PlanUpdate {
	out := make([]store.PlanUpdate, len(us))
	for i, u := range us {
		out[i] = store.PlanUpdate{Version: u.Version, ClientID: u.ClientID, Changes: u.Changes, Author: store.PlanAuthor(u.Author)}
	}
	return out
}

// plannerStore is the store as plannerhost's Storage.
type plannerStore struct{ s *store.Store }

var _ plannerhost.Storage = plannerStore{}

func (p plannerStore) Messages(ctx context.Context, channelID string, limit int) ([]room.Message, error) {
	return roomStore(p).Messages(ctx, channelID, limit)
}

func (p plannerStore) LatestReference(ctx context.Context, from, to string) (room.Reference, bool, error) {
	ref, found, err := p.s.LatestReference(ctx, from, to)
	return room.Reference{Kind: room.ReferenceDocument, ChannelID: ref.ChannelID, Label: ref.Label,
		ObservedRevision: ref.ObservedRevision, ObservedSourceHash: ref.ObservedHash}, found, err
}

func (p plannerStore) HasReferences(ctx context.Context, from string) (bool, error) {
	return p.s.HasReferences(ctx, from)
}

func (p plannerStore) SaveReplyTo(ctx context.Context, channelID, messageID, replyID string) error {
	return p.s.SaveReplyTo(ctx, channelID, messageID, replyID)
}

func (p plannerStore) SaveImage(ctx context.Context, channelID string, img picture.Image) error {
	return p.s.SaveImage(ctx, channelID, store.Image{SHA256: img.SHA256, Ext: img.Ext, MimeType: img.MimeType,
		Width: img.Width, Height: img.Height, Data: img.Data})
}

func (p plannerStore) Image(ctx context.Context, channelID, sha string) (picture.Image, error) {
	img, err := p.s.Image(ctx, channelID, sha)
	if err != nil {
		return picture.Image{}, plannerError(err)
	}
	return picture.Image{SHA256: img.SHA256, Ext: img.Ext, MimeType: img.MimeType,
		Width: img.Width, Height: img.Height, Data: img.Data}, nil
}

func (p plannerStore) Runs(ctx context.Context, channelID string) ([]plannerhost.StoredRun, error) {
	runs, err := p.s.Runs(ctx, channelID)
	if err != nil {
		return nil, err
	}
	out := make([]plannerhost.StoredRun, len(runs))
	for i, r := range runs {
		out[i] = plannerhost.StoredRun{ID: r.ID, Card: r.Card, Stages: make([]plannerhost.RunStage, len(r.Stages))}
		for j, s := range r.Stages {
			out[i].Stages[j] = plannerhost.RunStage(s)
		}
	}
	return out, nil
}

func (p plannerStore) SaveRuns(ctx context.Context, channelID string, updates []plannerhost.RunUpdate, deleted []string) error {
	out := make([]store.RunUpdate, len(updates))
	for i, u := range updates {
		out[i] = store.RunUpdate{ID: u.ID, Card: u.Card, ReplaceStages: u.ReplaceStages}
		for _, s := range u.Stages {
			out[i].Stages = append(out[i].Stages, store.RunStage(s))
		}
	}
	return p.s.SaveRuns(ctx, channelID, out, deleted)
}

func (p plannerStore) ModelChoice(ctx context.Context, channelID string) (plannerhost.ModelChoice, error) {
	c, err := p.s.ModelChoice(ctx, channelID)
	return plannerhost.ModelChoice(c), plannerError(err)
}

func (p plannerStore) MarkModelFellBack(ctx context.Context, channelID, model, thinkingLevel string) (bool, error) {
	return p.s.MarkModelFellBack(ctx, channelID, model, thinkingLevel)
}

// describedStore is the room's Persister with the description schedule:
// a plan change, once committed, schedules the document's description.
type describedStore struct {
	roomStore
	a *App
}

func (p describedStore) CommitPlan(ctx context.Context, channelID string, updates []room.Update) error {
	err := p.roomStore.CommitPlan(ctx, channelID, updates)
	if err == nil && len(updates) > 0 {
		p.a.describer.edited(channelID)
	}
	return err
}

func (p describedStore) SaveDecisions(ctx context.Context, channelID string, cards []room.Decision, placement []room.Update) error {
	err := p.roomStore.SaveDecisions(ctx, channelID, cards, placement)
	if err == nil && len(placement) > 0 {
		p.a.describer.edited(channelID)
	}
	return err
}
