package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// Who may call the API: only a session cookie Chopin issued, or the agent
// token (never a wrong token falling back to the cookie); launch links
// that expire; and launch links given only to the token holder with no
// foreign Origin.

func TestOnlyIssuedSessionsAndTheTokenAreAccepted(t *testing.T) {
	ta := startApp(t)
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	anon := &http.Client{CheckRedirect: noRedirect}
	var cookie string
	for _, c := range ta.Browser.Jar.Cookies(apptest.MustURL(ta.URL())) {
		if c.Name == sessionCookie {
			cookie = c.Value
		}
	}
	if cookie == "" {
		t.Fatal("the browser has no session cookie")
	}
	withCookie := func(v string) map[string]string { return map[string]string{"Cookie": sessionCookie + "=" + v} }
	apptest.Want(t, ta.Request(anon, "GET", "/api/repositories", nil, withCookie(cookie)), 200, "")
	for _, v := range []string{"made-up", cookie + "x", cookie[:len(cookie)-1], strings.ToUpper(cookie)} {
		apptest.Want(t, ta.Request(anon, "GET", "/api/repositories", nil, withCookie(v)), 401, "unauthorized")
	}
	// The room socket is refused before the upgrade too.
	r := ta.Request(anon, "GET", "/ws?channel=0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f", nil, map[string]string{
		"Cookie": sessionCookie + "=made-up", "Origin": ta.URL(), "Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
	if r.Status != 401 {
		t.Errorf("room socket with an unknown cookie: %d", r.Status)
	}

	// A wrong bearer is refused even beside a good cookie: it does not
	// fall back to the browser session.
	h := withCookie(cookie)
	h["Authorization"] = "Bearer chopin_a_wrong"
	apptest.Want(t, ta.Request(anon, "GET", "/api/repositories", nil, h), 401, "unauthorized")
	h["Authorization"] = "Bearer " + ta.Token()
	apptest.Want(t, ta.Request(anon, "GET", "/api/repositories", nil, h), 200, "")

	// A session outlives a restart of the same data directory.
	cfg := ta.app.cfg
	ta.Stop()
	ta = startAppWith(t, cfg)
	apptest.Want(t, ta.Request(anon, "GET", "/api/repositories", nil, withCookie(cookie)), 200, "")
	apptest.Want(t, ta.Request(anon, "GET", "/api/repositories", nil, withCookie("made-up")), 401, "unauthorized")
}

func TestLaunchLinksExpire(t *testing.T) {
	var l launchTokens
	now := time.Unix(1_800_000_000, 0)
	a, b := l.issue(now), l.issue(now)
	if a == b || len(a) < 40 {
		t.Fatalf("tokens %q %q", a, b)
	}
	if l.redeem(a, now.Add(launchLifetime+time.Millisecond)) {
		t.Error("a launch link redeemed after its lifetime")
	}
	if !l.redeem(b, now.Add(launchLifetime)) {
		t.Error("a launch link refused at the end of its lifetime")
	}
	if l.redeem(b, now) {
		t.Error("a launch link redeemed twice")
	}
	if l.redeem("", now) || l.redeem("never-issued", now) {
		t.Error("an unknown token redeemed")
	}
	// Issuing forgets the links that expired.
	l.issue(now)
	l.issue(now.Add(launchLifetime + time.Second))
	if len(l.expiry) != 1 {
		t.Errorf("%d outstanding links, want the fresh one", len(l.expiry))
	}
	if launchLifetime > 10*time.Minute {
		t.Errorf("launch links live %v", launchLifetime)
	}
}

func TestLaunchLinksOnlyForTheTokenHolder(t *testing.T) {
	ta := startApp(t)
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	bearer := "Bearer " + ta.Token()
	for _, tc := range []struct {
		name   string
		client *http.Client
		header map[string]string
		status int
		code   string
	}{
		{"the token, no Origin", anon, map[string]string{"Authorization": bearer}, 201, ""},
		{"the token, Chopin's Origin", anon, map[string]string{"Authorization": bearer, "Origin": ta.URL()}, 201, ""},
		{"the token from another site", anon, map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, 403, "forbidden-origin"},
		{"the token from another port", anon, map[string]string{"Authorization": bearer, "Origin": "http://127.0.0.1:1"}, 403, "forbidden-origin"},
		{"a wrong token", anon, map[string]string{"Authorization": "Bearer chopin_a_wrong"}, 401, "unauthorized"},
		{"no token", anon, nil, 401, "unauthorized"},
		{"the browser session", ta.Browser, map[string]string{"Origin": ta.URL()}, 401, "unauthorized"},
	} {
		r := ta.Request(tc.client, "POST", "/api/launch-links", nil, tc.header)
		if r.Status != tc.status || tc.code != "" && r.Code() != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
			continue
		}
		if tc.status != 201 {
			continue
		}
		var link struct{ URL string }
		r.JSON(t, &link)
		if !strings.HasPrefix(link.URL, ta.URL()+"/launch?token=") {
			t.Fatalf("%s: link %q", tc.name, link.URL)
		}
		// The link signs a browser in.
		if r := ta.Request(anon, "GET", strings.TrimPrefix(link.URL, ta.URL()), nil, nil); r.Status != http.StatusSeeOther ||
			!strings.Contains(r.Header.Get("Set-Cookie"), sessionCookie+"=") {
			t.Errorf("%s: launch %d", tc.name, r.Status)
		}
	}
}
