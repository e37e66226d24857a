package app

import (
	"bytes"
	"compress/gzip"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/assets"
)

// handleUI serves the embedded web UI. Built files (scripts, styles) are
// public, since they are the same in every copy of Chopin, and immutable,
// since assets/build names each by a hash of its content; they are stored
// gzip-compressed and sent that way. The page itself, at any client-side
// route, needs the browser session.
func (a *App) handleUI(c echo.Context) error {
	name := strings.TrimPrefix(path.Clean(c.Request().URL.Path), "/")
	if name != "" && name != "index.html" {
		if gz, ok := assets.Gzipped(name); ok {
			return serveGzipped(c, name, gz)
		}
	}
	if a.callerOf(c) != browser {
		return c.HTML(http.StatusUnauthorized, signInPage("This browser is not signed in to Chopin.", a.sameOriginPath(c.Request().URL.RequestURI())))
	}
	page, err := assets.ReadFile("index.html")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(http.StatusOK, page)
}

// serveGzipped sends a compressed built file, decompressing it only for a
// client that does not accept gzip.
func serveGzipped(c echo.Context, name string, gz []byte) error {
	h := c.Response().Header()
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	if strings.Contains(c.Request().Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		return c.Blob(http.StatusOK, ctype, gz)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return err
	}
	c.Response().WriteHeader(http.StatusOK)
	_, err = io.Copy(c.Response(), zr)
	return err
}
