package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
	"github.com/labstack/echo/v4"
)

// handleReferencedBy lists the documents whose Chat refers to this one
// (`#` references), the most recently referring first: the document's
// "Referenced by" in its header.
func (a *App) handleReferencedBy(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	from, err := a.store.ReferencedBy(c.Request().Context(), ch.ID)
	if err != nil {
		return err
	}
	out := make([]channelJSON, len(from))
	for i, f := range from {
		out[i] = toChannelJSON(f)
	}
	return c.JSON(http.StatusOK, struct {
		ReferencedBy []channelJSON `json:"referencedBy"`
	}{out})
}

// passageSteps is the history of document id after version after, through
// version through, as LocatePassage maps a passage through it: at most
// room.MaxPassageSteps changes, ending before the first version pruned to a
// snapshot (the blocks' digests find the passage past it).
func passageSteps(ctx context.Context, s *store.Store, id string, after, through int64) ([]room.PassageStep, error) {
	if through <= after {
		return nil, nil
	}
	es, err := s.HistorySince(ctx, id, after, through, room.MaxPassageSteps)
	if err != nil {
		return nil, err
	}
	out := make([]room.PassageStep, 0, len(es))
	for _, e := range es {
		if e.Changes == nil {
			break
		}
		st := room.PassageStep{From: e.Version - 1, To: e.Version, Changes: e.Changes}
		if step, ok := store.ParseHistoryStep(e.Changes); ok {
			st.From, st.Changes = step.From, step.Changes
		}
		out = append(out, st)
	}
	return out, nil
}

// locatePassages finds, now, the passages of refs (nil for a whole
// document's reference). A passage of a document since deleted is
// orphaned.
func (a *App) locatePassages(ctx context.Context, refs []room.Reference) ([]*room.PassageNow, error) {
	out := make([]*room.PassageNow, len(refs))
	for i, ref := range refs {
		if ref.Passage == nil {
			continue
		}
		now, err := locatePassage(ctx, a.store, a.hub, ref, func(ch store.Channel) room.Channel { return a.roomChannel(ch) })
		if err != nil {
			return nil, err
		}
		out[i] = &now
	}
	return out, nil
}

// locatePassage finds ref's passage in its document now.
func locatePassage(ctx context.Context, s *store.Store, hub *room.Hub, ref room.Reference, rc func(store.Channel) room.Channel) (room.PassageNow, error) {
	ch, err := s.Channel(ctx, ref.ChannelID)
	if errors.Is(err, store.ErrNotFound) {
		return room.PassageNow{State: room.AnchorOrphaned}, nil
	}
	if err != nil {
		return room.PassageNow{}, err
	}
	r, release, err := hub.Acquire(ctx, rc(ch))
	if err != nil {
		return room.PassageNow{}, err
	}
	v := r.View()
	release()
	steps, err := passageSteps(ctx, s, ch.ID, ref.ObservedRevision, v.Revision)
	if err != nil {
		return room.PassageNow{}, err
	}
	return room.LocatePassage(*ref.Passage, ref.ObservedRevision, steps, v.Source, v.Revision), nil
}

// handleMessageReferences answers what a message refers to, each passage
// with where it is and how it reads now: Chat's reference chips.
func (a *App) handleMessageReferences(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	m, err := a.store.Message(ctx, ch.ID, c.Param("messageId"))
	if err != nil {
		return err
	}
	refs := room.MessageReferences(room.Message(m))
	located, err := a.locatePassages(ctx, refs)
	if err != nil {
		return err
	}
	type referenceNow struct {
		room.Reference
		Now *room.PassageNow `json:"now,omitempty"`
	}
	out := make([]referenceNow, len(refs))
	for i, ref := range refs {
		out[i] = referenceNow{ref, located[i]}
	}
	return c.JSON(http.StatusOK, struct {
		References []referenceNow `json:"references"`
	}{out})
}

// handlePassageChoices lists a document's blocks for the passage picker
// (# in the composer, then a passage), with the revision their offsets
// refer to.
func (a *App) handlePassageChoices(c echo.Context) error {
	return a.withRoom(c, func(ch store.Channel, r *room.Room) error {
		v := r.View()
		return c.JSON(http.StatusOK, struct {
			Revision int64                `json:"revision"`
			Title    string               `json:"title"`
			Blocks   []room.PassageChoice `json:"blocks"`
		}{v.Revision, ch.Title, room.PassageChoices(v.Source)})
	})
}

// ReferencesTo is the references to document to of the newest message in
// the Chat of document from that refers to it: read_reference shows the
// passages among them.
func (p plannerStore) ReferencesTo(ctx context.Context, from, to string) ([]room.Reference, error) {
	ref, found, err := p.s.LatestReference(ctx, from, to)
	if err != nil || !found {
		return nil, err
	}
	m, err := p.s.Message(ctx, from, ref.MessageID)
	if err != nil {
		return nil, err
	}
	var out []room.Reference
	for _, r := range room.MessageReferences(room.Message(m)) {
		if r.ChannelID == to {
			out = append(out, r)
		}
	}
	return out, nil
}

// PassageSteps is passageSteps for plannerhost.
func (p plannerStore) PassageSteps(ctx context.Context, id string, after, through int64) ([]room.PassageStep, error) {
	return passageSteps(ctx, p.s, id, after, through)
}
