package plannerhost

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// A person's choice of model and thinking level (capability-catalog). The
// attached client reports its catalog; the room's composers see it, with the
// document's choice, as chat:model; PUT .../planner/model changes the choice.
// The choice is checked against the last catalog when it is made and again
// when a turn starts: what the catalog no longer lists is not sent, the turn
// runs with the client's default, and Chat says so once.

// modelChoice is a document's chosen model and level, with the model's
// name as the catalog gave it when chosen. FellBack is set once Chat
// recorded a turn falling back from this choice: the composer stops saying
// it is unavailable, and the notice is not repeated. The choice is saved
// with the document (store migration 006), so it outlives a restart; the
// catalog it is checked against is the attached client's.
type modelChoice = store.ModelChoice

// modelChoice reads the document's saved choice; none when it has none or
// it cannot be read (logged: the turn then runs the client's default).
func (a *App) modelChoice(doc string) modelChoice {
	c, err := a.store.ModelChoice(context.Background(), doc)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		a.log.Error("read the model choice", "channel", doc, "err", err)
	}
	return c
}

// modelStateJSON is chat:model's "model" and GET/PUT .../planner/model's body.
type modelStateJSON struct {
	// Offered: the attached client reported a catalog, so the composer
	// offers a choice. Without one it offers none.
	Offered  bool                       `json:"offered"`
	Models   []agentconn.CatalogModel   `json:"models"`
	Default  *agentconn.ModelDefault    `json:"default,omitempty"`
	Commands []agentconn.CatalogCommand `json:"commands"`
	// The saved choice.
	Model         string `json:"model,omitempty"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	ModelName     string `json:"modelName,omitempty"`
	// Unavailable: the chosen model or level is no longer in the catalog
	// and no turn has recorded the fallback yet.
	Unavailable bool `json:"unavailable,omitempty"`
}

func (a *App) modelState(doc string) modelStateJSON {
	cat := a.agent.Catalog(doc)
	choice := a.modelChoice(doc)
	st := modelStateJSON{Models: []agentconn.CatalogModel{}, Commands: []agentconn.CatalogCommand{},
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
	if a.cfg.Model != "" {
		st.Default = &agentconn.ModelDefault{ID: a.cfg.Model} // MODEL takes the client default's place
	}
	if st.ModelName == "" {
		st.ModelName = choice.Model
	}
	if cat != nil && !choice.FellBack {
		_, _, lost := a.checkChoice(cat, choice)
		st.Unavailable = lost != ""
	}
	return st
}

// showModel sends the document's open tabs its chat:model.
func (a *App) showModel(doc string) {
	if r, ok := a.hub.Room(doc); ok {
		r.ShowModel(a.modelState(doc))
	}
}

// CatalogChanged is a new report from the attached client.
func (h agentHost) CatalogChanged(documentID string, _ *agentconn.Catalog) {
	h.a.showModel(documentID)
}

var _ agentconn.CatalogHost = agentHost{}

// defaultModel is the model a turn that names none runs: MODEL, else the
// client's default.
func (a *App) defaultModel(cat *agentconn.Catalog) string {
	if a.cfg.Model != "" {
		return a.cfg.Model
	}
	if cat != nil && cat.Models != nil && cat.Models.Default != nil {
		return cat.Models.Default.ID
	}
	return ""
}

// checkChoice returns what of c the catalog still lists, and when something
// is lost, the sentence Chat says about it.
func (a *App) checkChoice(cat *agentconn.Catalog, c modelChoice) (model, level, lost string) {
	name := c.ModelName
	if name == "" {
		name = c.Model
	}
	if c.Model != "" {
		m, ok := cat.Model(c.Model)
		if !ok {
			return "", "", fmt.Sprintf("The model %s chosen for this document is no longer available, so chopin replied with its default model.", name)
		}
		model = m.ID
		if m.Name != "" && c.ModelName == "" {
			name = m.Name
		}
	}
	if c.ThinkingLevel != "" {
		of := model
		if of == "" {
			of = a.defaultModel(cat)
		}
		if m, ok := cat.Model(of); ok && slices.Contains(m.ThinkingLevels, c.ThinkingLevel) {
			level = c.ThinkingLevel
		} else {
			return model, "", fmt.Sprintf("The thinking level %s chosen for this document is no longer available, so chopin replied with its default level.", c.ThinkingLevel)
		}
	}
	return model, level, ""
}

// applyModelChoice puts the document's choice into a turn, checked against
// the catalog again. It returns the Chat notice to post once the turn has
// started, when the turn fell back to the client's default.
func (a *App) applyModelChoice(doc string, req *agentconn.TurnRequest) func(ctx context.Context) {
	choice := a.modelChoice(doc)
	cat := a.agent.Catalog(doc)
	if cat == nil || choice.Model == "" && choice.ThinkingLevel == "" {
		return func(context.Context) {}
	}
	model, level, lost := a.checkChoice(cat, choice)
	if model != "" {
		req.Model = model // a person's choice replaces MODEL
	}
	req.ThinkingLevel = level
	if lost == "" {
		return func(context.Context) {}
	}
	return func(ctx context.Context) {
		marked, err := a.store.MarkModelFellBack(ctx, doc, choice.Model, choice.ThinkingLevel)
		if err != nil {
			a.log.Error("record the model fallback", "channel", doc, "err", err)
		}
		if !marked {
			return
		}
		if r, ok := a.hub.Room(doc); ok {
			r.Notice(ctx, lost)
		}
		a.showModel(doc)
	}
}

func (a *App) handlePlannerModelGet(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.modelState(ch.ID))
}

// handlePlannerModel is PUT .../planner/model {model?, thinkingLevel?}: the
// document's choice, checked against the attached client's last catalog. {}
// returns to the client's default.
func (a *App) handlePlannerModel(c echo.Context) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	var req struct {
		Model         *string `json:"model"`
		ThinkingLevel *string `json:"thinkingLevel"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	if req.Model != nil && *req.Model == "" || req.ThinkingLevel != nil && *req.ThinkingLevel == "" {
		return badRequest("invalid-argument", "model and thinkingLevel, when given, name a model and a level of the catalog; leave one out for the default.")
	}
	cat := a.agent.Catalog(ch.ID)
	if cat == nil {
		return httpError(http.StatusConflict, "no-catalog", "The attached Planner offers no choice of model: its client reported no catalog.")
	}
	var choice modelChoice
	if req.Model != nil {
		m, ok := cat.Model(*req.Model)
		if !ok {
			return httpError(http.StatusConflict, "model-unavailable", fmt.Sprintf("The Planner's client does not offer the model %q.", *req.Model))
		}
		choice.Model, choice.ModelName = m.ID, m.Name
	}
	if req.ThinkingLevel != nil {
		of := choice.Model
		if of == "" {
			of = a.defaultModel(cat)
		}
		m, ok := cat.Model(of)
		if !ok || !slices.Contains(m.ThinkingLevels, *req.ThinkingLevel) {
			return httpError(http.StatusConflict, "thinking-level-unavailable", fmt.Sprintf("The model %q offers no thinking level %q.", of, *req.ThinkingLevel))
		}
		choice.ThinkingLevel = *req.ThinkingLevel
	}
	if err := a.store.SaveModelChoice(c.Request().Context(), ch.ID, choice); err != nil {
		return err
	}
	a.showModel(ch.ID)
	return c.JSON(http.StatusOK, a.modelState(ch.ID))
}

// joinedModel sends a socket that just joined the document's chat:model.
func (a *App) joinedModel(doc string, m *room.Member) { m.ShowModel(a.modelState(doc)) }
