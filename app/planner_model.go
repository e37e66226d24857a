package app

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/store"
)

// A person's choice of model and thinking level (capability-catalog) over
// HTTP: GET and PUT .../planner/model. The choice is checked against the
// attached client's last catalog when it is made; plannerhost checks it
// again when a turn starts and shows it to the composers as chat:model.

func (a *App) handlePlannerModelGet(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.planner.ModelState(ch.ID))
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
	var choice store.ModelChoice
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
			of = a.planner.DefaultModel(cat)
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
	a.planner.ShowModel(ch.ID)
	return c.JSON(http.StatusOK, a.planner.ModelState(ch.ID))
}
