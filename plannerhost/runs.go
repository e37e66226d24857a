package plannerhost

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Run cards: the latest state of each workflow run a document's Planner
// reported, shown to the document's tabs as planner:runs and stored
// (RunStore), every stage of each run included, so they survive
// reconnects and restarts until Chat stops showing them. Reports merge as
// "Run stage deltas" says (wire.RunCard.Apply): a delta card adds or
// replaces stages by ID and never removes one; a full card replaces them
// all, unless it lists none, which keeps them; the run keeps the
// earlierStages of its last full card. A link that closes sends a last
// report with its live runs stopped; they stay on the board as stopped
// until later runs push them out.

// maxBoardRuns is how many runs a document's board shows; ended runs go
// first when more arrive.
const maxBoardRuns = 64

type runBoard struct {
	mu   sync.Mutex
	docs map[string]*docRuns
}

type docRuns struct {
	order []string // first reported first
	cards map[string]*wire.RunCard
}

// docLocked is the document's board, read from the store the first time.
func (b *runBoard) docLocked(st RunStore, log *slog.Logger, documentID string) *docRuns {
	if b.docs == nil {
		b.docs = map[string]*docRuns{}
	}
	if d := b.docs[documentID]; d != nil {
		return d
	}
	d := &docRuns{cards: map[string]*wire.RunCard{}}
	runs, err := st.Runs(context.Background(), documentID)
	if err != nil {
		// Not kept: the next call reads the store again.
		log.Error("read run cards", "channel", documentID, "err", err)
		return d
	}
	for _, r := range runs {
		c := &wire.RunCard{}
		if err := json.Unmarshal(r.Card, c); err != nil {
			log.Error("read a run card", "channel", documentID, "run", r.ID, "err", err)
			continue
		}
		c.Stages = make([]wire.Stage, 0, len(r.Stages))
		for _, s := range r.Stages {
			var stage wire.Stage
			if err := json.Unmarshal(s.Body, &stage); err != nil {
				log.Error("read a run stage", "channel", documentID, "run", r.ID, "err", err)
				continue
			}
			c.Stages = append(c.Stages, stage)
		}
		d.cards[r.ID] = c
		d.order = append(d.order, r.ID)
	}
	b.docs[documentID] = d
	return d
}

// apply merges a report, stores what changed, and returns the document's
// cards.
func (b *runBoard) apply(st RunStore, log *slog.Logger, documentID string, report agentconn.RunsReport) []wire.RunCard {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.docLocked(st, log, documentID)
	var updates []RunUpdate
	for _, card := range report.Cards {
		c := d.cards[card.ID]
		if c == nil {
			c = &wire.RunCard{}
			d.cards[card.ID] = c
			d.order = append(d.order, card.ID)
		}
		had := len(c.Stages)
		c.Apply(card)
		u := RunUpdate{ID: card.ID, Card: cardJSON(*c)}
		switch {
		case card.StagesDelta:
			u.Stages = stagesNamed(c.Stages, card.Stages, false)
		case len(card.Stages) > 0 || had == 0:
			u.ReplaceStages, u.Stages = true, stagesNamed(c.Stages, nil, true)
		}
		updates = append(updates, u)
	}
	var deleted []string
	for i := 0; len(d.order) > maxBoardRuns && i < len(d.order); {
		if id := d.order[i]; !d.cards[id].Live() {
			delete(d.cards, id)
			d.order = append(d.order[:i], d.order[i+1:]...)
			deleted = append(deleted, id)
			continue
		}
		i++
	}
	if err := st.SaveRuns(context.Background(), documentID, updates, deleted); err != nil {
		log.Error("store run cards", "channel", documentID, "err", err)
	}
	return d.listLocked()
}

// cardJSON is a card as stored: without its stages, which have rows of
// their own.
func cardJSON(c wire.RunCard) json.RawMessage {
	c.Stages = []wire.Stage{}
	b, _ := json.Marshal(c)
	return b
}

// stagesNamed is the stored rows of the run's stages that a delta names
// (each ID once, where the merge put it), or of all of them.
func stagesNamed(stages, named []wire.Stage, all bool) []RunStage {
	want := map[string]bool{}
	for _, s := range named {
		want[s.ID] = true
	}
	var out []RunStage
	for i, s := range stages {
		if !all && !want[s.ID] {
			continue
		}
		body, _ := json.Marshal(s)
		out = append(out, RunStage{ID: s.ID, Position: i, Body: body})
	}
	return out
}

// cards returns the document's run cards, first reported first.
func (b *runBoard) cards(st RunStore, log *slog.Logger, documentID string) []wire.RunCard {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.docLocked(st, log, documentID).listLocked()
}

func (b *runBoard) forget(documentID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.docs, documentID)
}

func (d *docRuns) listLocked() []wire.RunCard {
	out := make([]wire.RunCard, 0, len(d.order))
	for _, id := range d.order {
		out = append(out, *d.cards[id])
	}
	return out
}

// runCards is the document's run cards as Chat shows them.
func (h *Host) runCards(documentID string) []wire.RunCard {
	return h.runs.cards(h.store, h.log, documentID)
}

// Runs shows a session's runs report as run cards.
func (h *Host) Runs(documentID string, report agentconn.RunsReport) {
	cards := h.runs.apply(h.store, h.log, documentID, report)
	if r, ok := h.hub.Room(documentID); ok {
		r.ShowRuns(cards)
	}
}
