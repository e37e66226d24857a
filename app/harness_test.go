package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// testApp is the real app on port 0 with a real SQLite file, and a browser
// that is signed in through a launch link, as a person's would be.
type testApp struct {
	t       testing.TB
	app     *App
	browser *http.Client
	cancel  context.CancelFunc
	done    chan error
}

func testConfig(t testing.TB, dir string) Config {
	t.Helper()
	env := map[string]string{
		"CHOPIN_DATA_DIR":   filepath.Join(dir, "data"),
		"CHOPIN_CONFIG_DIR": filepath.Join(dir, "config"),
		"PORT":              "0",
	}
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
	a, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ta := &testApp{t: t, app: a, cancel: cancel, done: make(chan error, 1)}
	go func() { ta.done <- a.Run(ctx) }()
	t.Cleanup(ta.stop)

	jar, _ := cookiejar.New(nil)
	ta.browser = &http.Client{Jar: jar}
	resp, err := ta.browser.Get(a.NewLaunchURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("launch link: %d", resp.StatusCode)
	}
	return ta
}

func (ta *testApp) stop() {
	if ta.cancel == nil {
		return
	}
	ta.cancel()
	if err := <-ta.done; err != nil {
		ta.t.Errorf("Run: %v", err)
	}
	ta.cancel = nil
}

// response is a decoded reply.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// code is the error code of a {code, message} reply.
func (r response) code() string {
	var e struct{ Code string }
	json.Unmarshal(r.Body, &e)
	return e.Code
}

// do sends a request as the signed-in browser, with the app's own Origin.
func (ta *testApp) do(method, path string, body any) response {
	return ta.request(ta.browser, method, path, body, map[string]string{"Origin": ta.app.URL()})
}

func (ta *testApp) request(client *http.Client, method, path string, body any, header map[string]string) response {
	ta.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, ta.app.URL()+path, rd)
	if err != nil {
		ta.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		ta.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// want fails the test unless the reply has the status (and, for errors, the code).
func want(t testing.TB, r response, status int, code string) {
	t.Helper()
	if r.Status != status || (code != "" && r.code() != code) {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, code)
	}
}

func (ta *testApp) addRepository(name string) {
	ta.t.Helper()
	want(ta.t, ta.do("POST", "/api/repositories", map[string]string{"name": name}), 201, "")
}

func (ta *testApp) createDocument(repo, title string) channelJSON {
	ta.t.Helper()
	var body any
	if title != "" {
		body = map[string]string{"title": title}
	}
	r := ta.do("POST", "/api/repositories/"+repo+"/channels", body)
	want(ta.t, r, 201, "")
	var ch channelJSON
	r.json(ta.t, &ch)
	return ch
}

// roomClient is a browser socket on a document's room.
type roomClient struct {
	t     testing.TB
	conn  *websocket.Conn
	hello map[string]any // the session:hello it was greeted with
}

func (ta *testApp) dialRoom(channelID string) *roomClient {
	ta.t.Helper()
	u, _ := url.Parse(ta.app.URL())
	header := http.Header{"Origin": {ta.app.URL()}}
	for _, c := range ta.browser.Jar.Cookies(u) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ta.app.URL(), "http")+"/ws?channel="+channelID, header)
	if err != nil {
		ta.t.Fatalf("dial room: %v (%v)", err, resp)
	}
	rc := &roomClient{t: ta.t, conn: conn}
	ta.t.Cleanup(func() { conn.Close() })
	// The join is complete once the snapshots have arrived.
	rc.hello = rc.until("session:hello")
	rc.until("decisions:snapshot")
	return rc
}

func (rc *roomClient) send(v any) {
	rc.t.Helper()
	if err := rc.conn.WriteJSON(v); err != nil {
		rc.t.Fatal(err)
	}
}

// next reads the next frame as a generic object.
func (rc *roomClient) next() map[string]any {
	rc.t.Helper()
	rc.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var m map[string]any
	if err := rc.conn.ReadJSON(&m); err != nil {
		rc.t.Fatalf("read room frame: %v", err)
	}
	return m
}

// until reads frames until one has the type, and returns it.
func (rc *roomClient) until(typ string) map[string]any {
	rc.t.Helper()
	for {
		if m := rc.next(); m["type"] == typ {
			return m
		}
	}
}

// closeCode reads until the socket closes and returns its close code and text.
func (rc *roomClient) closeCode() (int, string) {
	rc.t.Helper()
	rc.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := rc.conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Text
			}
			rc.t.Fatalf("socket ended without a close frame: %v", err)
		}
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
