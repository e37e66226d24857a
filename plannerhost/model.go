package plannerhost

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// A person's choice of model and thinking level (capability-catalog). The
// attached client reports its catalog; the room's composers see it, with the
// document's choice, as chat:model; PUT .../planner/model (app) changes the
// choice.
// The choice is checked against the last catalog when it is made and again
// when a turn starts: what the catalog no longer lists is not sent, the turn
// runs with the client's default, and Chat says so once.

// ModelChoice is a document's chosen model and level, with the model's
// name as the catalog gave it when chosen. FellBack is set once Chat
// recorded a turn falling back from this choice: the composer stops saying
// it is unavailable, and the notice is not repeated. The choice is saved
// with the document (store migration 006), so it outlives a restart; the
// catalog it is checked against is the attached client's.
type ModelChoice struct {
	Model         string
	ThinkingLevel string
	ModelName     string
	FellBack      bool
}

// modelChoice reads the document's saved choice; none when it has none or
// it cannot be read (logged: the turn then runs the client's default).
func (h *Host) modelChoice(doc string) ModelChoice {
	c, err := h.store.ModelChoice(context.Background(), doc)
	if err != nil && !errors.Is(err, ErrNotFound) {
		h.log.Error("read the model choice", "channel", doc, "err", err)
	}
	return c
}

// ModelState is chat:model's "model" and GET/PUT .../planner/model's body.
type ModelState struct {
	// Offered: the attached client reported a catalog, so the composer
	// offers a choice. Without one it offers none.
	Offered  bool                  `json:"offered"`
	Models   []wire.CatalogModel   `json:"models"`
	Default  *wire.ModelDefault    `json:"default,omitempty"`
	Commands []wire.CatalogCommand `json:"commands"`
	// The saved choice.
	Model         string `json:"model,omitempty"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	ModelName     string `json:"modelName,omitempty"`
	// Unavailable: the chosen model or level is no longer in the catalog
	// and no turn has recorded the fallback yet.
	Unavailable bool `json:"unavailable,omitempty"`
}

// ModelState is the document's catalog and choice as its composers show them.
func (h *Host) ModelState(doc string) ModelState {
	cat := h.agent.Catalog(doc)
	choice := h.modelChoice(doc)
	st := ModelState{Models: []wire.CatalogModel{}, Commands: []wire.CatalogCommand{},
		Model: choice.Model, ThinkingLevel: choice.ThinkingLevel, ModelName: choice.ModelName}
	if cat != nil {
		st.Offered = true
		if cat.Models != nil {
			st.Models = cat.Models.Available
			st.Default = cat.Models.Default
		}
		if cat.Commands != nil {
			st.Commands = cat.Commands
		}
		if m, ok := cat.Model(choice.Model); ok && st.ModelName == "" {
			st.ModelName = m.Name
		}
	}
	if h.model != "" {
		st.Default = &wire.ModelDefault{ID: h.model} // MODEL takes the client default's place
	}
	if st.ModelName == "" {
		st.ModelName = choice.Model
	}
	if cat != nil && !choice.FellBack {
		_, _, lost := h.checkChoice(cat, choice)
		st.Unavailable = lost != ""
	}
	return st
}

// ShowModel sends the document's open tabs its chat:model.
func (h *Host) ShowModel(doc string) {
	if r, ok := h.hub.Room(doc); ok {
		r.ShowModel(h.ModelState(doc))
	}
}

// CatalogChanged is a new report from the attached client: its models
// for the composer, and the checkout it reads for the Planner's status.
func (h *Host) CatalogChanged(documentID string, _ *wire.Catalog) {
	h.ShowModel(documentID)
	if r, ok := h.hub.Room(documentID); ok {
		r.ShowPlanner(h.Status(documentID))
	}
}

var _ agentconn.CatalogHost = (*Host)(nil)

// DefaultModel is the model a turn that names none runs: MODEL, else the
// client's default.
func (h *Host) DefaultModel(cat *wire.Catalog) string {
	if h.model != "" {
		return h.model
	}
	if cat != nil && cat.Models != nil && cat.Models.Default != nil {
		return cat.Models.Default.ID
	}
	return ""
}

// checkChoice returns what of c the catalog still lists, and when something
// is lost, the sentence Chat says about it.
func (h *Host) checkChoice(cat *wire.Catalog, c ModelChoice) (model, level, lost string) {
	name := c.ModelName
	if name == "" {
		name = c.Model
	}
	if c.Model != "" {
		m, ok := cat.Model(c.Model)
		if !ok {
			return "", "", fmt.Sprintf("The model %s chosen for this document is no longer available, so the Planner replied with its default model.", name)
		}
		model = m.ID
		if m.Name != "" && c.ModelName == "" {
			name = m.Name
		}
	}
	if c.ThinkingLevel != "" {
		of := model
		if of == "" {
			of = h.DefaultModel(cat)
		}
		if m, ok := cat.Model(of); ok && slices.Contains(m.ThinkingLevels, c.ThinkingLevel) {
			level = c.ThinkingLevel
		} else {
			return model, "", fmt.Sprintf("The thinking level %s chosen for this document is no longer available, so the Planner replied with its default level.", c.ThinkingLevel)
		}
	}
	return model, level, ""
}

// applyModelChoice puts the document's choice into a turn, checked against
// the catalog again. It returns the Chat notice to post once the turn has
// started, when the turn fell back to the client's default.
func (h *Host) applyModelChoice(doc string, req *agentconn.TurnRequest) func(ctx context.Context) {
	choice := h.modelChoice(doc)
	cat := h.agent.Catalog(doc)
	if cat == nil || choice.Model == "" && choice.ThinkingLevel == "" {
		return func(context.Context) {}
	}
	model, level, lost := h.checkChoice(cat, choice)
	if model != "" {
		req.Model = model // a person's choice replaces MODEL
	}
	req.ThinkingLevel = level
	if lost == "" {
		return func(context.Context) {}
	}
	return func(ctx context.Context) {
		marked, err := h.store.MarkModelFellBack(ctx, doc, choice.Model, choice.ThinkingLevel)
		if err != nil {
			h.log.Error("record the model fallback", "channel", doc, "err", err)
		}
		if !marked {
			return
		}
		if r, ok := h.hub.Room(doc); ok {
			r.Notice(ctx, lost)
		}
		h.ShowModel(doc)
	}
}
