package app

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/chopin-desktop/chopin/assets"
)

// The icon chopin desktop-entry installs is the UI's favicon, served
// without signing in.
func TestFavicon(t *testing.T) {
	ta := startApp(t)
	r := ta.Request(&http.Client{}, "GET", "/favicon.svg", nil, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/svg+xml" || !bytes.Equal(r.Body, assets.Icon) {
		t.Errorf("/favicon.svg without signing in: %d %q", r.Status, r.Header.Get("Content-Type"))
	}
}
