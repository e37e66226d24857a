package app

import (
	"sync"

	"github.com/chopin-desktop/chopin/agentconn"
)

// Run cards: the latest state of each workflow run a document's Planner
// reported, kept in memory (a restart ends every link, and with it every
// live run) and shown to the document's tabs as planner:runs. A link that
// closes sends a last report with its live runs stopped; they stay on the
// board as stopped until later runs push them out.

// maxBoardRuns is how many runs a document's board shows; ended runs go
// first when more arrive.
const maxBoardRuns = 64

type runBoard struct {
	mu   sync.Mutex
	docs map[string]*docRuns
}

type docRuns struct {
	order []string // first reported first
	cards map[string]*agentconn.RunCard
}

// apply merges a report and returns the document's cards.
func (b *runBoard) apply(documentID string, report agentconn.RunsReport) []agentconn.RunCard {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.docs == nil {
		b.docs = map[string]*docRuns{}
	}
	d := b.docs[documentID]
	if d == nil {
		d = &docRuns{cards: map[string]*agentconn.RunCard{}}
		b.docs[documentID] = d
	}
	for _, card := range report.Cards {
		c := d.cards[card.ID]
		if c == nil {
			c = &agentconn.RunCard{}
			d.cards[card.ID] = c
			d.order = append(d.order, card.ID)
		}
		c.Apply(card)
	}
	for i := 0; len(d.order) > maxBoardRuns && i < len(d.order); {
		if id := d.order[i]; !d.cards[id].Live() {
			delete(d.cards, id)
			d.order = append(d.order[:i], d.order[i+1:]...)
			continue
		}
		i++
	}
	return d.listLocked()
}

// cards returns the document's run cards, first reported first.
func (b *runBoard) cards(documentID string) []agentconn.RunCard {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := b.docs[documentID]; d != nil {
		return d.listLocked()
	}
	return []agentconn.RunCard{}
}

func (b *runBoard) forget(documentID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.docs, documentID)
}

func (d *docRuns) listLocked() []agentconn.RunCard {
	out := make([]agentconn.RunCard, 0, len(d.order))
	for _, id := range d.order {
		out = append(out, *d.cards[id])
	}
	return out
}

// Runs shows a session's runs report as run cards.
func (h agentHost) Runs(documentID string, report agentconn.RunsReport) {
	cards := h.a.runs.apply(documentID, report)
	if r, ok := h.a.hub.Room(documentID); ok {
		r.ShowRuns(cards)
	}
}
