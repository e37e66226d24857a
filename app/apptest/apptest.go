package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The running app and the browser signed in to it, and HTTP as that
// browser sends it.

// Wait bounds a wait for something that should happen soon.
const Wait = 10 * time.Second

// Server is the app under test: *app.App.
type Server interface {
	URL() string
	NewLaunchURL() string
	Run(ctx context.Context) error
	AgentToken() string
}

// Env is the environment of a test instance in dir: its own data and
// config directories, and port 0.
func Env(dir string) map[string]string {
	return map[string]string{
		"CHOPIN_DATA_DIR":   filepath.Join(dir, "data"),
		"CHOPIN_CONFIG_DIR": filepath.Join(dir, "config"),
		"PORT":              "0",
	}
}

// ProcessEnv is the environment of a chopin process that a test or a
// benchmark starts in root: this process's, less every variable Chopin
// reads, with its own config and data directories (root/config,
// root/data) and XDG's under root, then extra ("PORT=0", "BROWSER=...").
func ProcessEnv(root string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "AUTH_MODE", "HARNESS", "AGENT", "SERVER_HOST", "PORT", "APP_ORIGIN", "MODEL", "BROWSER",
			"CHOPIN_DATA_DIR", "CHOPIN_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME":
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"CHOPIN_CONFIG_DIR="+filepath.Join(root, "config"),
		"CHOPIN_DATA_DIR="+filepath.Join(root, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(root, "xdg-config"),
		"XDG_DATA_HOME="+filepath.Join(root, "xdg-data"),
	)
	return append(env, extra...)
}

// App is a Server running until the test ends, and a browser that is
// signed in through a launch link, as a person's would be.
type App struct {
	T       testing.TB
	Browser *http.Client
	server  Server
	cancel  context.CancelFunc
	done    chan error
}

// Serve runs s until Stop or the end of the test, and signs a browser in.
func Serve(t testing.TB, s Server) *App {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := &App{T: t, server: s, cancel: cancel, done: make(chan error, 1)}
	go func() { a.done <- s.Run(ctx) }()
	t.Cleanup(a.Stop)

	jar, _ := cookiejar.New(nil)
	a.Browser = &http.Client{Jar: jar}
	resp, err := a.Browser.Get(s.NewLaunchURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("launch link: %d", resp.StatusCode)
	}
	return a
}

// Stop quits the app and waits until it has, as a person quitting would.
func (a *App) Stop() {
	if a.cancel == nil {
		return
	}
	a.cancel()
	if err := <-a.done; err != nil {
		a.T.Errorf("Run: %v", err)
	}
	a.cancel = nil
}

// URL is the app's origin.
func (a *App) URL() string { return a.server.URL() }

// AgentURL is the agent connection's address.
func (a *App) AgentURL() string {
	return "ws" + strings.TrimPrefix(a.URL(), "http") + "/api/v1/agent"
}

// Token is the local agent token the app accepts now.
func (a *App) Token() string { return a.server.AgentToken() }

// Response is a reply, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Code is the error code of a {code, message} reply.
func (r Response) Code() string {
	var e struct{ Code string }
	json.Unmarshal(r.Body, &e)
	return e.Code
}

// Want fails the test unless the reply has the status (and, for errors,
// the code).
func Want(t testing.TB, r Response, status int, code string) {
	t.Helper()
	if r.Status != status || (code != "" && r.Code() != code) {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, code)
	}
}

// Do sends a request as the signed-in browser, with the app's own Origin.
func (a *App) Do(method, path string, body any) Response {
	a.T.Helper()
	return a.Request(a.Browser, method, path, body, map[string]string{"Origin": a.URL()})
}

// Request sends a request with client and exactly the headers given. A
// body that is not a string is sent as JSON.
func (a *App) Request(client *http.Client, method, path string, body any, header map[string]string) Response {
	a.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.URL()+path, rd)
	if err != nil {
		a.T.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		a.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// AddRepository registers the repository owner/name.
func (a *App) AddRepository(name string) {
	a.T.Helper()
	Want(a.T, a.Do("POST", "/api/repositories", map[string]string{"name": name}), 201, "")
}

// Document is a created document as the HTTP API returns it, in part.
type Document struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Slug       string `json:"slug"`
	Repository string `json:"repository"`
	URL        string `json:"url"`
	UpdatedAt  string `json:"updatedAt"`
}

// CreateDocument creates a document in the repository repo; an empty
// title takes the server's default.
func (a *App) CreateDocument(repo, title string) Document {
	a.T.Helper()
	var body any
	if title != "" {
		body = map[string]string{"title": title}
	}
	r := a.Do("POST", "/api/repositories/"+repo+"/channels", body)
	Want(a.T, r, 201, "")
	var d Document
	r.JSON(a.T, &d)
	return d
}

// MustURL parses s, which a test wrote.
func MustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
