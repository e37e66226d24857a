package app

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A launch link's next is a path on Chopin's own origin, or the browser
// lands on /.
func TestLaunchNextStaysOnTheOrigin(t *testing.T) {
	ta := startApp(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// The keys are next as the link's query spells it.
	for next, want := range map[string]string{
		"%2Fdocuments%2Focto%2Fplans%2Flaunch": "/documents/octo/plans/launch",
		"/documents/a%3Fx%3D1":                 "/documents/a?x=1",
		"":                                     "/",
		"//evil.example/":                      "/",
		"/%5Cevil.example/":                    "/",
		"/%255Cevil.example/":                  "/",
		"/%09/evil.example/":                   "/",
		"/%250A/evil.example/":                 "/",
		"https://evil.example/":                "/",
		"evil.example":                         "/",
		// However many slashes, dots or encodings: a path that a browser
		// (or the page it lands on) could read as another host goes to /.
		"///evil.example/landing":             "/",
		"%2F%2F%2Fevil.example%2Flanding":     "/",
		"////evil.example/":                   "/",
		"/%2F%2Fevil.example/":                "/",
		"%2F%252F%252Fevil.example%2F":        "/",
		"/%25252F%25252Fevil.example/":        "/",
		"/.//evil.example/":                   "/",
		"/./%2F/evil.example/":                "/",
		"/a/..//evil.example/":                "/",
		"/a/%2e%2e//evil.example/":            "/",
		"/%2e/%2Fevil.example/":               "/",
		"%2F%5C%5Cevil.example":               "/",
		"/%255C%255Cevil.example":             "/",
		"/%0D%0A/evil.example/":               "/",
		"%2F%09%2Fevil.example":               "/",
		"%2F%2F%09evil.example":               "/",
		"/%E3%80%80/evil.example":             "/%E3%80%80/evil.example",
		"/documents/octo/plans/a%2Fb":         "/documents/octo/plans/a/b",
		"/documents/octo/plans/launch%23crew": "/documents/octo/plans/launch#crew",
		"/documents/./octo/plans":             "/documents/octo/plans",
	} {
		link := ta.app.NewLaunchURL() + "&next=" + next
		res, err := noFollow.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || loc != want {
			t.Errorf("next=%q: %d to %q, want %q", next, res.StatusCode, loc, want)
		}
		if u, err := url.Parse(ta.URL()); err == nil {
			if r, err := u.Parse(loc); err != nil || r.Host != u.Host {
				t.Errorf("next=%q leaves the origin: %q", next, loc)
			}
		}
	}
}

// A page a browser asks for without signing in says how to open that very
// page signed in: chopin open with its path, shell-quoted and escaped.
func TestSignedOutPageNamesThePage(t *testing.T) {
	ta := startApp(t)
	for path, want := range map[string]string{
		"/documents/octo/plans/launch":   "chopin open /documents/octo/plans/launch",
		"/documents/octo/plans/a?x=1&y":  "chopin open &#39;/documents/octo/plans/a?x=1&amp;y&#39;",
		"/documents/octo/plans/%3Cb%3Ex": "chopin open /documents/octo/plans/%3Cb%3Ex",
		"/":                              "chopin open</code>",
	} {
		res, err := http.Get(ta.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d\n%s\nwant 401 naming %q", path, res.StatusCode, body, want)
		}
	}
}
