package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/instance"
)

// The local account signs in to the browser through a one-time launch link
// that the binary opens itself; the link sets a long-lived session cookie.
// Agent clients and scripts present the local agent token as a bearer.

const (
	sessionCookie  = "chopin_session"
	launchLifetime = 2 * time.Minute
	// Browsers cap cookie lifetimes at 400 days; the session lives as long.
	sessionLifetime = 400 * 24 * time.Hour
)

// launchTokens are the outstanding one-time launch links.
type launchTokens struct {
	mu     sync.Mutex
	expiry map[string]time.Time
}

func (l *launchTokens) issue(now time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.expiry == nil {
		l.expiry = map[string]time.Time{}
	}
	for t, exp := range l.expiry {
		if now.After(exp) {
			delete(l.expiry, t)
		}
	}
	token := randomToken()
	l.expiry[token] = now.Add(launchLifetime)
	return token
}

// redeem consumes a launch token; it works once, within its lifetime.
func (l *launchTokens) redeem(token string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.expiry[token]
	delete(l.expiry, token)
	return ok && !now.After(exp)
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewLaunchURL returns a fresh one-time link that signs a browser in.
func (a *App) NewLaunchURL() string {
	return a.origin + "/launch?token=" + a.launches.issue(time.Now())
}

// agentToken is the local agent token, re-read from its file so that
// `chopin token --rotate` in another process takes effect here: before a
// bearer is compared, the file is looked at (a stat), and read again when it
// changed, so the old token is refused as soon as the rotation has written
// the new one.
type agentToken struct {
	dir      string
	onRotate func(old string) // set at start: links of the old token close

	mu    sync.RWMutex
	value string
	file  os.FileInfo // the file the value was read from
}

func loadAgentToken(dir string) (*agentToken, error) {
	v, err := instance.LoadOrCreateAgentToken(dir)
	if err != nil {
		return nil, err
	}
	fi, _ := os.Stat(instance.AgentTokenPath(dir))
	return &agentToken{dir: dir, value: v, file: fi}, nil
}

func (t *agentToken) matches(bearer string) bool {
	t.refresh()
	t.mu.RLock()
	defer t.mu.RUnlock()
	return subtle.ConstantTimeCompare([]byte(bearer), []byte(t.value)) == 1
}

// refresh reads the token again when its file is another one, or changed,
// since it was read.
func (t *agentToken) refresh() {
	fi, err := os.Stat(instance.AgentTokenPath(t.dir))
	if err != nil {
		return
	}
	t.mu.RLock()
	same := t.file != nil && os.SameFile(fi, t.file) && fi.ModTime().Equal(t.file.ModTime()) && fi.Size() == t.file.Size()
	t.mu.RUnlock()
	if same {
		return
	}
	if old, changed, err := t.reload(); err == nil && changed && t.onRotate != nil {
		t.onRotate(old)
	}
}

// reload re-reads the file and reports whether the token changed, and the
// value it replaced: links attached with that one must close.
func (t *agentToken) reload() (old string, changed bool, err error) {
	fi, _ := os.Stat(instance.AgentTokenPath(t.dir))
	v, err := instance.LoadOrCreateAgentToken(t.dir)
	if err != nil {
		return "", false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, changed = t.value, v != t.value
	t.value, t.file = v, fi
	return old, changed, nil
}

// watchAgentToken notices a rotation by another process within a second.
func (a *App) watchAgentToken() (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				a.reloadAgentToken()
			}
		}
	}()
	return func() { close(done) }
}

// reloadAgentToken re-reads the token's file and, when it was rotated,
// closes what the old token opened.
func (a *App) reloadAgentToken() {
	old, changed, err := a.agentToken.reload()
	if err != nil {
		a.log.Warn("re-read agent token", "err", err)
	} else if changed {
		a.log.Info("agent token rotated")
		a.agentTokenRotated(old)
	}
}

// bearer returns the token of an "Authorization: Bearer" header, or "".
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// checkHost refuses requests whose Host is not this instance's own: a page
// on another site that rebinds its DNS name to 127.0.0.1 must not reach us.
func (a *App) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	want := strings.TrimPrefix(strings.TrimPrefix(a.origin, "http://"), "https://")
	return func(c echo.Context) error {
		if !strings.EqualFold(c.Request().Host, want) {
			if isMCP(c.Request()) {
				return mcpRefuse(c, errForbiddenHost)
			}
			return errForbiddenHost
		}
		return next(c)
	}
}

// caller is who a request comes from.
type caller int

const (
	anonymous caller = iota
	browser          // holds the session cookie
	script           // presents the agent token
)

// callerOf is who sent c's request; a connection that carried a signed-in
// request is the last to be closed to make room (connlimit.go).
func (a *App) callerOf(c echo.Context) caller {
	who := a.identify(c)
	if who != anonymous {
		markSignedIn(c.Request())
	}
	return who
}

func (a *App) identify(c echo.Context) caller {
	r := c.Request()
	if b := bearer(r); b != "" {
		if a.agentToken.matches(b) {
			return script
		}
		return anonymous
	}
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return anonymous
	}
	if v, ok := a.sessions.Load(ck.Value); ok && time.Since(v.(time.Time)) < sessionTouchEvery {
		return browser
	}
	ok, err := a.store.BrowserSession(r.Context(), ck.Value)
	if err != nil {
		a.log.Error("read browser session", "err", err)
		return anonymous
	}
	if !ok { // unknown, signed out, or unused for too long
		a.sessions.Delete(ck.Value)
		return anonymous
	}
	// Written down beside the request, not in its way: the first page
	// after a start would wait for a durable commit.
	go func() {
		if err := a.store.TouchBrowserSession(context.WithoutCancel(r.Context()), ck.Value); err != nil {
			a.log.Warn("record a browser session's use", "err", err)
		}
	}()
	a.sessions.Store(ck.Value, time.Now())
	return browser
}

// sessionTouchEvery is how often a browser session's use is written down:
// it lasts store.BrowserSessionIdle unused, so an hour's precision is
// plenty and a request does not write the database.
const sessionTouchEvery = time.Hour

// handleSignOutEverywhere ends every browser session, this one included:
// each browser must open a new launch link (chopin open) to come back.
func (a *App) handleSignOutEverywhere(c echo.Context) error {
	n, err := a.store.SignOutEverywhere(c.Request().Context())
	if err != nil {
		return err
	}
	a.sessions.Clear()
	a.closeSignedOutSockets()
	a.log.Info("signed out every browser", "sessions", n)
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return c.JSON(http.StatusOK, map[string]int64{"signedOut": n})
}

// requireAPIAccess admits the browser session or the agent token. A browser
// changing state must also send this instance's exact Origin; a script may
// omit Origin but may not send a foreign one.
func (a *App) requireAPIAccess(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		who := a.callerOf(c)
		if who == anonymous {
			return errSignInRequired
		}
		if err := a.checkOrigin(c.Request(), who == script); err != nil {
			return err
		}
		return next(c)
	}
}

// ownPage guards the GETs that write, export or may cost seconds
// (routes.go names them): a browser may ask only from Chopin's own page.
// Another page on this computer is the same site (any port of 127.0.0.1),
// so the SameSite=Strict cookie comes along with its requests, and a GET
// is not held to the Origin rule: refused here are a request whose
// Sec-Fetch-Site is present and not same-origin (another page, or an
// address typed in), and one whose Origin is present and foreign. A
// script with the agent token sends neither.
func (a *App) ownPage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if o := r.Header.Get("Origin"); o != "" && o != a.origin {
			return errForeignPage
		}
		if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && !a.isScript(r) {
			return errForeignPage
		}
		return next(c)
	}
}

var errForeignPage = httpError(http.StatusForbidden, "forbidden-origin",
	"This can only be asked for from Chopin's own page (the browser says the request came from elsewhere): use the button in Chopin, or a script with the agent token.")

// isScript reports a request that presents the agent token.
func (a *App) isScript(r *http.Request) bool {
	b := bearer(r)
	return b != "" && a.agentToken.matches(b)
}

// checkOrigin enforces the exact-Origin rule on state-changing requests and
// on WebSocket upgrades.
func (a *App) checkOrigin(r *http.Request, originOptional bool) error {
	if !isStateChanging(r) {
		return nil
	}
	origin := r.Header.Get("Origin")
	if origin == "" && originOptional {
		return nil
	}
	if origin != a.origin {
		return errForbiddenOrigin
	}
	return nil
}

func isStateChanging(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		// Any request to upgrade, however its Upgrade header is spelled
		// ("websocket, x" included, which a WebSocket library accepts),
		// is held to the Origin rule.
		return len(r.Header.Values("Upgrade")) > 0
	}
	return true
}

// isBrowserUpgrade reports a WebSocket upgrade as browsers send it: one
// Upgrade header that is exactly "websocket" (in any letter case), with
// Connection: Upgrade and the WebSocket version and key.
func isBrowserUpgrade(r *http.Request) bool {
	up := r.Header.Values("Upgrade")
	return len(up) == 1 && strings.EqualFold(strings.TrimSpace(up[0]), "websocket") && websocket.IsWebSocketUpgrade(r)
}

// handleLaunch redeems a one-time launch link: it starts a browser session
// and sends the browser on to the app.
func (a *App) handleLaunch(c echo.Context) error {
	if !a.launches.redeem(c.QueryParam("token"), time.Now()) {
		return c.HTML(http.StatusForbidden, signInPage("This launch link has expired or was already used.", a.sameOriginPath(c.QueryParam("next"))))
	}
	token := randomToken()
	if err := a.store.AddBrowserSession(c.Request().Context(), token); err != nil {
		return err
	}
	a.sessions.Store(token, time.Now())
	markSignedIn(c.Request())
	c.SetCookie(&http.Cookie{
		Name:     sessionCookie,
		Value:    token,
		Path:     "/",
		MaxAge:   int(sessionLifetime / time.Second),
		HttpOnly: true,
		Secure:   strings.HasPrefix(a.origin, "https://"),
		SameSite: http.SameSiteStrictMode,
	})
	return c.Redirect(http.StatusSeeOther, a.sameOriginPath(c.QueryParam("next")))
}

// sameOriginPath is next when it is a path on Chopin's own origin, else
// "/". A browser reads a backslash as a slash, drops tabs and line breaks,
// and reads "//host" (however many slashes) as another host; a page or a
// router may decode the path again. So next must start with one "/", hold
// no backslash or control character, and keep its path from starting with
// "//" once its dot segments are resolved, as written and after every
// percent-decoding; it is then sent on normalised (dot segments resolved).
func (a *App) sameOriginPath(next string) string {
	layer := next
	for i := 0; ; i++ {
		if i == maxPathDecodes || !plainPath(layer) {
			return "/"
		}
		decoded, err := url.PathUnescape(layer)
		if err != nil {
			return "/"
		}
		if decoded == layer {
			break
		}
		layer = decoded
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	base, err := url.Parse(a.origin)
	if err != nil {
		return "/"
	}
	r := base.ResolveReference(u)
	if r.Scheme != base.Scheme || r.Host != base.Host {
		return "/"
	}
	out := r.RequestURI()
	if r.Fragment != "" {
		out += "#" + r.EscapedFragment()
	}
	if !plainPath(out) {
		return "/"
	}
	return out
}

// maxPathDecodes bounds the percent-decodings sameOriginPath looks
// through; a next still changing after that many goes to "/".
const maxPathDecodes = 8

// plainPath reports s as a path that stays on the origin it is read
// against: one leading "/", no backslash, no control character, and no
// "//" at the start once "." and ".." segments are resolved.
func plainPath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.ContainsRune(s, '\\') ||
		strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return false
	}
	p, _, _ := strings.Cut(s, "?")
	p, _, _ = strings.Cut(p, "#")
	return !strings.HasPrefix(resolveDots(p), "//")
}

// resolveDots is path p (which starts with "/") with its "." and ".."
// segments resolved (RFC 3986, section 5.2.4).
func resolveDots(p string) string {
	segs := strings.Split(p, "/")[1:]
	var out []string
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			continue
		}
		if last {
			out = append(out, "")
		}
	}
	return "/" + strings.Join(out, "/")
}

// handleLaunchLinkCreate gives a fresh launch link to a process that holds
// the agent token: this is how a second `chopin` opens the running one.
func (a *App) handleLaunchLinkCreate(c echo.Context) error {
	if b := bearer(c.Request()); b == "" || !a.agentToken.matches(b) {
		return errSignInRequired
	}
	markSignedIn(c.Request())
	if err := a.checkOrigin(c.Request(), true); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]string{"url": a.NewLaunchURL()})
}

// signInPage is the page a browser that is not signed in gets: why, and the
// command that opens next (a path on Chopin's origin, from sameOriginPath)
// signed in.
func signInPage(reason, next string) string {
	command := "chopin open"
	if next != "/" {
		command += " " + shellQuote(next)
	}
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chopin</title><link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>:root{color-scheme:light dark}body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}code{background:#f3f4f6;padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}@media(prefers-color-scheme:dark){body{background:#15181c;color:#e6e8eb}code{background:#262b32}}</style>
</head><body><main><h1>Open Chopin from your computer</h1><p>` + html.EscapeString(reason) + `</p>
<p>Run <code class="open-command">` + html.EscapeString(command) + `</code> and it opens this page signed in.</p></main></body></html>`
}

// shellQuote is s as one word for a POSIX shell: as it is
// when it holds only safe characters, else in single quotes.
func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-%+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
