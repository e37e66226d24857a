package app

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/version"
)

// sessionJSON is what the UI learns about who it is and what this server
// offers.
type sessionJSON struct {
	Login     string          `json:"login"`
	Name      string          `json:"name"`
	AuthMode  string          `json:"authMode"`
	Origin    string          `json:"origin"`
	AgentURL  string          `json:"agentUrl,omitempty"`
	MCPURL    string          `json:"mcpUrl"`
	Version   string          `json:"version"`
	Features  map[string]bool `json:"features"`
	DataDir   string          `json:"dataDir"`
	ConfigDir string          `json:"configDir"`
	// Command is how a person runs this Chopin from a terminal: "chopin"
	// when that is on the PATH and is this binary, else its full path.
	Command string `json:"command"`
	// Binary is its full path, which a desktop app that launches
	// chopin mcp needs (its PATH is not the shell's).
	Binary string `json:"binary"`
}

func (a *App) handleSession(c echo.Context) error {
	s := sessionJSON{
		Login:     a.cfg.Login,
		Name:      a.cfg.DisplayName,
		AuthMode:  a.cfg.AuthMode,
		Origin:    a.origin,
		MCPURL:    a.origin + "/mcp",
		Version:   version.Build().Version,
		Features:  map[string]bool{"agent": a.cfg.Agent, "research": false},
		DataDir:   a.cfg.DataDir,
		ConfigDir: a.cfg.ConfigDir,
		Command:   selfCommand(),
		Binary:    executable(),
	}
	if a.cfg.Agent {
		s.AgentURL = "ws" + a.origin[len("http"):] + "/api/v1/agent"
	}
	return c.JSON(http.StatusOK, s)
}

// canWrite decides whether the caller may change a repository's documents.
// The local account administers every repository; this is the one place a
// future auth mode would decide otherwise.
func (a *App) canWrite(c echo.Context) error {
	return nil
}

// canRead decides whether the caller may read one of the documents
// (channel IDs) that hold an image. The local account reads every document;
// this is the one place a future auth mode would decide otherwise.
func (a *App) canRead(c echo.Context, channelIDs []string) bool {
	return len(channelIDs) > 0
}

// handleAgentToken shows the local agent token to the signed-in browser, for
// the Connect dialog's MCP set-up, behind its "Show token" button.
func (a *App) handleAgentToken(c echo.Context) error {
	if a.callerOf(c) != browser {
		return errSignInRequired
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]string{"token": a.AgentToken()})
}

// selfCommand is how the texts name this binary (instance.Command).
func selfCommand() string { return instance.Command() }
