package app

import (
	"net/http"
	"net/url"
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
		"/.//evil.example/":                    "/.//evil.example/",
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
