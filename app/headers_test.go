package app

import (
	"net/http"
	"testing"
)

// Every response carries the page policy and refuses framing: the UI, its
// built files, the sign-in page, errors, the API.
func TestEveryResponseRefusesFramingAndRemoteContent(t *testing.T) {
	ta := startApp(t)
	for _, path := range []string{"/", "/documents/octo/plans", "/healthz", "/api/session", "/api/no-such-route", "/no-such-file.js"} {
		for _, client := range []*http.Client{ta.Browser, http.DefaultClient} {
			res := ta.Request(client, "GET", path, nil, nil)
			h := res.Header
			if h.Get("Content-Security-Policy") != pageCSP || h.Get("X-Frame-Options") != "DENY" {
				t.Errorf("GET %s (%d): CSP %q, X-Frame-Options %q", path, res.Status, h.Get("Content-Security-Policy"), h.Get("X-Frame-Options"))
			}
		}
	}
	const want = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
		"font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	if pageCSP != want {
		t.Errorf("the policy is %q", pageCSP)
	}
}
