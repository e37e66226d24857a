package cli

// The one HTTP client of the commands. Every command that acts on Chopin
// (open, backup, export, import, repo add, sign-out-everywhere) calls the
// running instance's documented HTTP API (docs/http-api.md) with the local
// agent token, as any script would: the running instance owns the database
// and the live documents, so their work goes through the same rooms and
// rules as the UI's. The token is only ever sent to a loopback origin.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/ident"
	"github.com/chopin-desktop/chopin/instance"
)

// client is the HTTP API of one running Chopin.
type client struct {
	origin string
	token  string
	http   *http.Client
}

// newClient is the API at a recorded origin, which must be on this
// computer, presenting the agent token of configDir.
func newClient(rec instance.Record, configDir string) (*client, error) {
	origin, err := loopbackOrigin(rec)
	if err != nil {
		return nil, err
	}
	token, err := instance.ReadAgentToken(configDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("Chopin is running at %s, but there is no agent token in %s; is it using another config directory (CHOPIN_CONFIG_DIR)?", origin, configDir)
	}
	if err != nil {
		return nil, err
	}
	return &client{origin: origin, token: token, http: &http.Client{
		Transport: &http.Transport{Proxy: nil}, // loopback: never through a proxy
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}, nil
}

// loopbackOrigin is the instance's origin, which must be on this computer:
// the token is never sent anywhere else.
func loopbackOrigin(rec instance.Record) (string, error) {
	u, err := url.Parse(rec.Origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !config.IsLoopbackName(u.Hostname()) {
		return "", fmt.Errorf("the running Chopin (process %d) recorded %q, which is not a loopback address; quit it and start Chopin again", rec.PID, rec.Origin)
	}
	return rec.Origin, nil
}

// runningClient finds the Chopin running with cfg's data directory, waiting
// a little for one that is still starting. It returns instance.ErrNotRunning
// when there is none.
func runningClient(ctx context.Context, cfg config.Config) (*client, error) {
	rec, err := waitForOrigin(ctx, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	return newClient(rec, cfg.ConfigDir)
}

// waitForOrigin finds the running instance, waiting a little for one that is
// still starting to record where it serves.
func waitForOrigin(ctx context.Context, dataDir string) (instance.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, startingWait)
	defer cancel()
	for {
		rec, err := instance.Find(dataDir)
		if err != nil || rec.Origin != "" {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return rec, fmt.Errorf("Chopin is running (process %d) but has not said where after %s; if it stays like this, end process %d and start Chopin again", rec.PID, startingWait, rec.PID)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// do sends a request and returns the response when its status is 2xx; any
// other answer becomes an *apiError with the server's own message.
func (api *client) do(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, api.origin+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+api.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := api.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("Chopin at %s does not answer: %w", api.origin, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e); err != nil || e.Message == "" {
		return nil, &apiError{Status: resp.StatusCode, Message: fmt.Sprintf("Chopin at %s answered %s", api.origin, resp.Status)}
	}
	return nil, &apiError{Status: resp.StatusCode, Code: e.Code, Message: e.Message}
}

// call sends in as JSON (none when nil) and decodes the answer into out
// (when not nil).
func (api *client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	contentType := ""
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, contentType = bytes.NewReader(raw), "application/json"
	}
	resp, err := api.do(ctx, method, path, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	return decodeJSON(resp.Body, out)
}

// apiError is a refusal of the running Chopin, in its words.
type apiError struct {
	Status        int
	Code, Message string
}

func (e *apiError) Error() string { return e.Message }

// decodeJSON reads a JSON answer of the running Chopin, bounded.
func decodeJSON(r io.Reader, v any) error {
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("Chopin's answer could not be read: %w", err)
	}
	return nil
}

// document is what the commands read of a document (GET
// /api/channels/:id and the repository routes).
type document struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

// withAPI runs fn with the HTTP API of the running Chopin, or, when none
// runs, of one started inside this process for the duration of fn (on a
// free port, without a browser; nothing started is left running).
func (c *CLI) withAPI(ctx context.Context, cfg config.Config, fn func(*client) error) error {
	api, err := runningClient(ctx, cfg)
	if !errors.Is(err, instance.ErrNotRunning) {
		if err != nil {
			return err
		}
		return fn(api)
	}
	quiet := cfg
	quiet.Port, quiet.AppOrigin = 0, ""
	origin, stop, err := c.serveHere(ctx, quiet, slog.New(slog.DiscardHandler))
	if errors.Is(err, instance.ErrAlreadyRunning) {
		// Started by someone else in the meantime: use that one.
		if api, err = runningClient(ctx, cfg); err == nil {
			return fn(api)
		}
	}
	if err != nil {
		return err
	}
	defer stop()
	api, err = newClient(instance.Record{Origin: origin}, cfg.ConfigDir)
	if err != nil {
		return err
	}
	return fn(api)
}

// serveHere starts Chopin's server inside this process and returns once it
// listens; stop ends it and waits for it to finish.
func (c *CLI) serveHere(ctx context.Context, cfg config.Config, logger *slog.Logger) (origin string, stop func(), err error) {
	if c.Local == nil {
		return "", nil, errors.New("this chopin cannot start Chopin's server")
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.Local.Serve(runCtx, cfg, logger, func(origin string, _ func() string) { ready <- origin })
	}()
	select {
	case origin = <-ready:
		return origin, func() {
			cancel()
			if err := <-done; err != nil {
				logger.Error("stop Chopin", "err", err)
			}
		}, nil
	case err = <-done:
		cancel()
		if err == nil {
			err = errors.New("Chopin's server stopped before it listened")
		}
		return "", nil, err
	}
}

// documentID resolves what a person names a document by: its address,
// owner/name/slug, or its ID.
func (api *client) documentID(ctx context.Context, doc string) (string, error) {
	path := doc
	if u, err := url.Parse(doc); err == nil && u.Scheme != "" {
		path = u.Path
	}
	path = strings.TrimPrefix(strings.Trim(path, "/"), "documents/")
	parts := strings.Split(path, "/")
	switch {
	case len(parts) == 1 && ident.ValidDocumentID(parts[0]):
		return parts[0], nil
	case len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "":
		return "", fmt.Errorf("%q names no document: give its address as the browser shows it, owner/name/slug, or its ID", doc)
	}
	var d document
	route := "/api/repositories/" + url.PathEscape(parts[0]) + "/" + url.PathEscape(parts[1]) + "/documents/" + url.PathEscape(parts[2])
	if err := api.call(ctx, http.MethodGet, route, nil, &d); err != nil {
		return "", err
	}
	return d.ID, nil
}
