package app

// GET /api/model-servers (docs/http-api.md, "Service"): which of the model
// servers people run offline answers on its usual loopback address, and
// with what models, for the Connect a Planner dialog. Only a signed-in
// browser on Chopin's own page may ask: each request makes Chopin knock
// on several local ports.

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/modelserver"
)

func (a *App) handleModelServers(c echo.Context) error {
	if a.callerOf(c) != browser {
		return errSignInRequired
	}
	servers := modelserver.Usual
	if s := a.modelServers.Load(); s != nil {
		servers = *s
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"servers": modelserver.Probe(c.Request().Context(), servers)})
}
