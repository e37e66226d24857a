package room

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// memPersister is an in-memory Persister for tests of the room alone. The
// app's tests use the real store.
type memPersister struct {
	mu        sync.Mutex
	plans     map[string]*PlanRecord
	messages  map[string][]Message
	decisions map[string][]Decision
}

func newMemPersister() *memPersister {
	return &memPersister{plans: map[string]*PlanRecord{}, messages: map[string][]Message{}, decisions: map[string][]Decision{}}
}

func (p *memPersister) LoadPlan(_ context.Context, id string) (PlanRecord, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rec, ok := p.plans[id]; ok {
		return PlanRecord{Exists: true, Checkpoint: rec.Checkpoint, Journal: slices.Clone(rec.Journal)}, nil
	}
	return PlanRecord{}, nil
}

func (p *memPersister) CommitPlan(_ context.Context, id string, us []Update) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := p.plans[id]
	if rec == nil {
		return fmt.Errorf("no plan %s", id)
	}
	rec.Journal = append(rec.Journal, us...)
	return nil
}

func (p *memPersister) CheckpointPlan(_ context.Context, id string, cp Checkpoint) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := p.plans[id]
	if rec == nil {
		rec = &PlanRecord{Exists: true}
		p.plans[id] = rec
	}
	rec.Checkpoint = cp
	rec.Journal = slices.DeleteFunc(rec.Journal, func(u Update) bool { return u.Version <= cp.KeepAfter })
	return nil
}

func (p *memPersister) Messages(_ context.Context, id string, limit int) ([]Message, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ms := p.messages[id]
	return slices.Clone(ms[max(0, len(ms)-limit):]), nil
}

func (p *memPersister) SaveMessage(_ context.Context, m Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ms := p.messages[m.ChannelID]
	for i := range ms {
		if ms[i].ID == m.ID {
			ms[i] = m
			return nil
		}
	}
	p.messages[m.ChannelID] = append(ms, m)
	return nil
}

func (p *memPersister) Decisions(_ context.Context, id string) ([]Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.decisions[id]), nil
}

func (p *memPersister) SaveDecisions(ctx context.Context, id string, cards []Decision, placement []Update) error {
	if err := p.CommitPlan(ctx, id, placement); len(placement) > 0 && err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cards {
		i := slices.IndexFunc(p.decisions[id], func(d Decision) bool { return d.ID == c.ID })
		if i >= 0 {
			p.decisions[id][i] = c
		} else {
			p.decisions[id] = append(p.decisions[id], c)
		}
	}
	return nil
}
