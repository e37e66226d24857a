package app

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/chopin-desktop/chopin/assets"
)

// pageCSP is every response's content security policy: the UI loads its
// scripts, styles, fonts and data from Chopin alone, shows images only from
// Chopin (and the data: and blob: URLs it makes itself), and no page may
// frame it. Styles may be inline: CodeMirror and Mermaid write their own.
// A document's image overrides it with a stricter sandbox (images.go).
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders puts the policy on every response, errors included.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		return next(c)
	}
}

// newEcho declares every route of the server in one place.
func (a *App) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = a.handleError
	e.Pre(headAsGet)
	e.Use(securityHeaders)
	e.Use(a.checkHost)
	// /mcp takes 4 MiB and refuses more itself, as JSON-RPC.
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: "4M", Skipper: func(c echo.Context) bool { return isMCP(c.Request()) }}))

	e.GET("/healthz", a.handleHealth)
	e.GET("/favicon.svg", handleIcon)
	e.GET("/launch", a.handleLaunch)
	e.POST("/api/launch-links", a.handleLaunchLinkCreate)
	e.GET("/ws", a.handleRoomSocket)
	e.GET("/images/:file", a.handleImage) // a document's own images: <sha256>.<ext>, ?w= for a thumbnail
	// The agent connection checks everything itself, in the spec's order
	// (404 when off, 426, 403 Origin, 401): outside the /api group, whose
	// sign-in and Origin rules would answer first. Every method reaches it,
	// so AGENT=off is a 404 to everything.
	e.Any("/api/v1/agent", echo.WrapHandler(a.agent))
	// The local agent MCP tools: the agent token, never the browser's
	// session; served also with AGENT=off. Every method reaches it, so one
	// it does not serve is a 405 with Allow.
	e.Any("/mcp", a.handleMCP)

	api := e.Group("/api", a.requireAPIAccess)
	api.GET("/session", a.handleSession)
	api.GET("/storage", a.handleStorage) // the database's soundness (integrity.go)
	api.GET("/agent-token", a.handleAgentToken)
	// ownPage: a GET that writes, exports or may cost seconds is asked
	// for only from Chopin's own page (or by a script).
	api.GET("/backup", a.handleBackup, a.ownPage)
	api.POST("/session/sign-out-everywhere", a.handleSignOutEverywhere)
	api.GET("/status", a.handleStatus)
	api.POST("/quit", a.handleQuit, a.ownPage)
	api.GET("/model-servers", a.handleModelServers, a.ownPage) // asks this computer's model servers

	api.GET("/search", a.handleSearch)

	api.GET("/repositories", a.handleRepositoryList)
	api.POST("/repositories", a.handleRepositoryCreate)
	api.GET("/repositories/:owner/:repository", a.handleRepositoryGet)
	api.PATCH("/repositories/:owner/:repository", a.handleRepositoryUpdate)
	api.DELETE("/repositories/:owner/:repository", a.handleRepositoryRemove)
	api.GET("/repositories/:owner/:repository/channels", a.handleChannelList)
	api.POST("/repositories/:owner/:repository/channels", a.handleChannelCreate)
	api.GET("/repositories/:owner/:repository/documents/:slug", a.handleChannelBySlug)
	api.POST("/repositories/:owner/:repository/imports", a.handleImport)

	api.GET("/channels/:channelId", a.handleChannelGet)
	api.GET("/channels/:channelId/jobs", a.handleChannelJobs)
	api.GET("/channels/:channelId/referenced-by", a.handleReferencedBy)
	api.GET("/channels/:channelId/passages", a.handlePassageChoices)
	api.PATCH("/channels/:channelId", a.handleChannelRename)
	api.POST("/channels/:channelId/archive", a.handleChannelArchive)
	api.POST("/channels/:channelId/restore", a.handleChannelRestore)
	api.DELETE("/channels/:channelId", a.handleChannelDelete)
	api.POST("/channels/:channelId/agent/reset", a.handlePlannerReset)
	api.GET("/channels/:channelId/planner", a.handlePlannerGet)
	api.GET("/channels/:channelId/planner/model", a.handlePlannerModelGet)
	api.PUT("/channels/:channelId/planner/model", a.handlePlannerModel)
	api.POST("/channels/:channelId/planner/stop", a.handlePlannerStop)
	api.POST("/channels/:channelId/planner/resume", a.handlePlannerResume)

	api.GET("/channels/:channelId/plan", a.handlePlanGet, a.ownPage)
	api.PUT("/channels/:channelId/plan", a.handlePlanPut)
	api.GET("/channels/:channelId/plan.md", a.handlePlanMarkdown, a.ownPage)
	api.POST("/channels/:channelId/plan/save", a.handlePlanSave)
	api.GET("/channels/:channelId/versions", a.handleVersions, a.ownPage)
	api.GET("/channels/:channelId/versions/:version", a.handleVersion, a.ownPage)
	api.GET("/channels/:channelId/versions/:version/plan.md", a.handleVersionMarkdown, a.ownPage)
	api.POST("/channels/:channelId/versions/:version/restore", a.handleVersionRestore)
	api.POST("/channels/:channelId/versions/:version/revert", a.handleVersionRevert)
	api.POST("/channels/:channelId/turns/:turn/revert", a.handleTurnRevert)
	api.GET("/channels/:channelId/timeline", a.handleTimeline, a.ownPage)
	api.GET("/channels/:channelId/diff", a.handleDiff, a.ownPage)
	api.GET("/channels/:channelId/messages", a.handleMessageList)
	api.GET("/channels/:channelId/messages/:messageId", a.handleMessageGet)
	api.GET("/channels/:channelId/messages/:messageId/text", a.handleMessageText)
	api.GET("/channels/:channelId/messages/:messageId/references", a.handleMessageReferences)
	api.POST("/channels/:channelId/messages", a.handleMessageCreate)
	api.POST("/channels/:channelId/messages/:messageId/retry", a.handleMessageRetry)
	api.GET("/channels/:channelId/decisions", a.handleDecisionList)
	api.POST("/channels/:channelId/decisions/:decisionId/answer", a.handleDecisionAnswer)
	api.POST("/channels/:channelId/decisions/:decisionId/cancel", a.handleDecisionCancel)
	api.POST("/channels/:channelId/decisions/:decisionId/discard", a.handleDecisionDiscard)
	api.POST("/channels/:channelId/decisions/:decisionId/reopen", a.handleDecisionReopen)
	api.GET("/channels/:channelId/comments", a.handleCommentList)
	api.POST("/channels/:channelId/comments", a.handleCommentStart)
	api.POST("/channels/:channelId/comments/:threadId/reply", a.handleCommentReply)
	api.POST("/channels/:channelId/comments/:threadId/accept", a.handleCommentAccept)
	api.POST("/channels/:channelId/comments/:threadId/dismiss", a.handleCommentDismiss)

	// Web research needs the network: the routes exist and say so.
	api.POST("/channels/:channelId/research-workspaces", a.handleResearch)
	api.GET("/channels/:channelId/research-workspaces/:workspaceId", a.handleResearch)
	api.POST("/channels/:channelId/research-workspaces/:workspaceId/cancel", a.handleResearch)
	api.POST("/channels/:channelId/research-workspaces/:workspaceId/retry", a.handleResearch)

	// Unknown API paths are JSON 404s, never the page.
	e.Any("/api/*", func(echo.Context) error { return errNotFound })

	// Everything else is the web UI.
	e.GET("/*", a.handleUI)
	return e
}

// headAsGet answers HEAD wherever GET is answered (RFC 9110 section 9.3.2):
// the request is routed as a GET (echo routes the request it was given, so
// the method is changed in place) and what the handler writes as the body is
// dropped.
func headAsGet(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodHead {
			return next(c)
		}
		r.Method = http.MethodGet
		c.Response().Writer = headWriter{c.Response().Writer}
		return next(c)
	}
}

// headWriter is a reply to HEAD: headers and status, no body.
type headWriter struct{ http.ResponseWriter }

func (headWriter) Write(p []byte) (int, error) { return len(p), nil }

// handleIcon serves Chopin's icon, the same in every copy, to anyone.
func handleIcon(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	return c.Blob(http.StatusOK, "image/svg+xml", assets.Icon)
}

func (a *App) handleHealth(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

func (a *App) handleResearch(echo.Context) error { return errResearch }
