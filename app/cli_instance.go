package app

// Commands that act through the running Chopin (backup, export, import)
// call its HTTP API with the local agent token, as any script would: the
// running instance owns the database and the live documents, so their work
// goes through the same rooms and rules as the UI's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
)

// instanceAPI is the HTTP API of the running Chopin.
type instanceAPI struct {
	origin string
	token  string
	client *http.Client
}

// runningAPI finds the Chopin running with cfg's data directory. It returns
// ErrNotRunning when there is none.
func runningAPI(ctx context.Context, cfg Config) (*instanceAPI, error) {
	rec, err := waitForOrigin(ctx, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	origin, err := url.Parse(rec.Origin)
	if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || !isLoopbackName(origin.Hostname()) {
		return nil, fmt.Errorf("the running Chopin (process %d) recorded %q, which is not a loopback address; quit it and start Chopin again", rec.PID, rec.Origin)
	}
	token, err := ReadAgentToken(cfg.ConfigDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("Chopin is running at %s, but there is no agent token in %s; is it using another config directory (CHOPIN_CONFIG_DIR)?", rec.Origin, cfg.ConfigDir)
	}
	if err != nil {
		return nil, err
	}
	return &instanceAPI{origin: rec.Origin, token: token, client: &http.Client{
		Transport: &http.Transport{Proxy: nil}, // loopback: never through a proxy
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}, nil
}

// do sends a request and returns the response when its status is 2xx; any
// other answer becomes an error with the server's own message.
func (api *instanceAPI) do(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, api.origin+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+api.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := api.client.Do(req)
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
		return nil, fmt.Errorf("Chopin at %s answered %s", api.origin, resp.Status)
	}
	return nil, &apiError{Status: resp.StatusCode, Code: e.Code, Message: e.Message}
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
