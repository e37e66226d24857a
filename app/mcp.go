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
	return mcpserver.New(m, m, m, m, mcpserver.Options{Origin: a.origin, Version: version.Build().Version, Logger: a.log})
}

// handleMCP admits a request to /mcp: 401 without this computer's agent
// token, 403 for an Origin that is present and not this instance's, each a
// JSON-RPC error (mcpRefuse), as is everything /mcp refuses.
func (a *App) handleMCP(c echo.Context) error {
	r := c.Request()
	a.reloadAgentToken()
	if b := bearer(r); b == "" || !a.agentToken.matches(b) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="chopin"`)
		return mcpRefuse(c, errMCPUnauthorized)
	}
	markSignedIn(r)
	if o := r.Header.Get("Origin"); o != "" && o != a.origin {
		return mcpRefuse(c, errForbiddenOrigin)
	}
	a.mcp().ServeHTTP(c.Response(), r)
	return nil
}

var errMCPUnauthorized = httpError(http.StatusUnauthorized, "unauthorized", "Send this computer's agent token as Authorization: Bearer <token>; `chopin token` prints it.")

// mcpRefuse answers a request to /mcp that app refuses as a JSON-RPC
// error, with the HTTP API's status and code (as data.code).
func mcpRefuse(c echo.Context, he *HTTPError) error {
	mcpserver.Refuse(c.Response(), c.Request(), he.Status, he.Code, he.Message)
	return nil
}

// isMCP reports a request to /mcp.
func isMCP(r *http.Request) bool { return r.URL.Path == "/mcp" }
