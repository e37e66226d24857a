package app

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/assets"
)

// handleUI serves the embedded web UI. Built files (scripts, styles) are
// public, since they are the same in every copy of Chopin, and immutable,
// since assets/build names each by a hash of its content; the page itself,
// at any client-side route, needs the browser session.
func (a *App) handleUI(c echo.Context) error {
	ui := assets.FS()
	name := strings.TrimPrefix(path.Clean(c.Request().URL.Path), "/")
	if name != "" && name != "index.html" {
		if st, err := fs.Stat(ui, name); err == nil && !st.IsDir() {
			c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			http.ServeFileFS(c.Response(), c.Request(), ui, name)
			return nil
		}
	}
	if a.callerOf(c) != browser {
		return c.HTML(http.StatusUnauthorized, signInPage("This browser is not signed in to Chopin."))
	}
	page, err := fs.ReadFile(ui, "index.html")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(http.StatusOK, page)
}
