package app

// /mcp, the local agent MCP tools (docs/mcp.md): the request is admitted
// here (Host on every route, then the agent token, read fresh so a rotation
// applies at once, and a foreign Origin refused), and mcpserver serves it.

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/mcpserver"
	"github.com/chopin-desktop/chopin/version"
)

func (a *App) newMCP() *mcpserver.Server {
	m := mcpStore{a}
	return mcpserver.New(m, m, m, m, mcpserver.Options{Origin: a.origin, Version: version.Version, Logger: a.log})
}

// handleMCP admits a request to /mcp: 401 without this computer's agent
// token, 403 for an Origin that is present and not this instance's.
func (a *App) handleMCP(c echo.Context) error {
	r := c.Request()
	a.reloadAgentToken()
	if b := bearer(r); b == "" || !a.agentToken.matches(b) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="chopin"`)
		return httpError(http.StatusUnauthorized, "unauthorized", "Send this computer's agent token as Authorization: Bearer <token>; `chopin token` prints it.")
	}
	if o := r.Header.Get("Origin"); o != "" && o != a.origin {
		return errForbiddenOrigin
	}
	a.mcp().ServeHTTP(c.Response(), r)
	return nil
}
