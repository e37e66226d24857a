package app

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// The real app on port 0 with a real SQLite file, and a browser that is
// signed in through a launch link, as a person's would be (package
// apptest). The lowercase names below are the ones app's tests were written
// with; each only hands on to apptest.

// testApp is the running app, its browser, and the App itself for tests
// that look inside.
type testApp struct {
	*apptest.App
	t       testing.TB
	app     *App
	browser *http.Client
}

func testConfig(t testing.TB, dir string) Config {
	t.Helper()
	env := apptest.Env(dir)
	cfg, err := LoadConfig(Flags{}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Login, cfg.DisplayName = "ada", "Ada"
	return cfg
}

func startApp(t testing.TB) *testApp {
	t.Helper()
	return startAppWith(t, testConfig(t, t.TempDir()))
}

func startAppWith(t testing.TB, cfg Config) *testApp {
	t.Helper()
	a, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	served := apptest.Serve(t, a)
	return &testApp{App: served, t: t, app: a, browser: served.Browser}
}

func (ta *testApp) stop() { ta.Stop() }

// agentWait bounds a wait for something that should happen soon.
const agentWait = apptest.Wait

func (ta *testApp) agentURL() string { return ta.AgentURL() }

// token is the local agent token the app accepts now.
func (ta *testApp) token() string { return ta.Token() }

// response is a decoded reply.
type response struct{ apptest.Response }

func (r response) json(t testing.TB, v any) {
	t.Helper()
	r.JSON(t, v)
}

// code is the error code of a {code, message} reply.
func (r response) code() string { return r.Code() }

// do sends a request as the signed-in browser, with the app's own Origin.
func (ta *testApp) do(method, path string, body any) response {
	ta.t.Helper()
	return response{ta.Do(method, path, body)}
}

func (ta *testApp) request(client *http.Client, method, path string, body any, header map[string]string) response {
	ta.t.Helper()
	return response{ta.Request(client, method, path, body, header)}
}

// want fails the test unless the reply has the status (and, for errors, the code).
func want(t testing.TB, r response, status int, code string) {
	t.Helper()
	apptest.Want(t, r.Response, status, code)
}

func (ta *testApp) addRepository(name string) {
	ta.t.Helper()
	ta.AddRepository(name)
}

func (ta *testApp) createDocument(repo, title string) channelJSON {
	ta.t.Helper()
	var ch channelJSON
	ta.CreateDocument(repo, title, &ch)
	return ch
}

// roomClient is a browser socket on a document's room.
type roomClient struct {
	*apptest.Room
	t     testing.TB
	conn  *websocket.Conn
	hello map[string]any // the session:hello it was greeted with
}

func (ta *testApp) dialRoom(channelID string) *roomClient {
	ta.t.Helper()
	rc := ta.DialRoom(channelID)
	return &roomClient{Room: rc, t: rc.T, conn: rc.Conn, hello: rc.Hello}
}

func (rc *roomClient) send(v any) {
	rc.t.Helper()
	rc.Send(v)
}

// next reads the next frame as a generic object.
func (rc *roomClient) next() map[string]any {
	rc.t.Helper()
	return rc.Next()
}

// until reads frames until one has the type, and returns it.
func (rc *roomClient) until(typ string) map[string]any {
	rc.t.Helper()
	return rc.Until(typ)
}

// closeCode reads until the socket closes and returns its close code and text.
func (rc *roomClient) closeCode() (int, string) {
	rc.t.Helper()
	return rc.CloseCode()
}

func mustURL(s string) *url.URL { return apptest.MustURL(s) }
