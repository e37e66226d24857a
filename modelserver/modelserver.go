package modelserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Server is a model server at its usual address.
type Server struct {
	ID   string `json:"id"`   // "ollama"
	Name string `json:"name"` // "Ollama"
	// BaseURL is its OpenAI-compatible API, on a loopback address.
	BaseURL string `json:"baseUrl"`
	// Start is how a person starts it, as a command line; Pull is how a
	// person gets a model for it, where that is a step of its own.
	Start string `json:"start"`
	Pull  string `json:"pull,omitempty"`
}

// Usual are the servers people run offline, at the addresses they serve on
// unless told otherwise, in the order they are offered and tried.
var Usual = []Server{
	{ID: "ollama", Name: "Ollama", BaseURL: "http://127.0.0.1:11434/v1", Start: "ollama serve", Pull: "ollama pull qwen2.5"},
	{ID: "llama.cpp", Name: "llama.cpp", BaseURL: "http://127.0.0.1:8080/v1", Start: "llama-server -m model.gguf --port 8080"},
	{ID: "lmstudio", Name: "LM Studio", BaseURL: "http://127.0.0.1:1234/v1", Start: "lms server start", Pull: "lms get qwen2.5-7b-instruct"},
	{ID: "vllm", Name: "vLLM", BaseURL: "http://127.0.0.1:8000/v1", Start: "vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000"},
}

// Status is a server and whether it answered, with the models it listed.
type Status struct {
	Server
	Running bool     `json:"running"`
	Models  []string `json:"models"` // empty when not running
}

// Bounds of one probe.
const (
	// Timeout is how long a server has to answer: a local server answers
	// in milliseconds, and a closed port is refused at once.
	Timeout = 1500 * time.Millisecond
	// maxAnswer bounds the answer read from one server.
	maxAnswer = 1 << 20
	// MaxModels bounds the models kept of one server.
	MaxModels = 200
)

// Loopback reports whether rawURL is an http(s) URL on this computer: a
// loopback IP address or localhost.
func Loopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// client asks loopback servers only: no proxy, no redirect (which could
// lead elsewhere).
var client = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// Probe asks every server at once for its models, each within Timeout,
// and says of each, in the order given, whether it answered with a list.
// A server that is not on a loopback address is not asked.
func Probe(ctx context.Context, servers []Server) []Status {
	out := make([]Status, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		out[i] = Status{Server: s, Models: []string{}}
		if !Loopback(s.BaseURL) {
			continue
		}
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, Timeout)
			defer cancel()
			if models, err := Models(pctx, s); err == nil {
				out[i].Running, out[i].Models = true, models
			}
		})
	}
	wg.Wait()
	return out
}

// Running is the servers of statuses that answered.
func Running(statuses []Status) []Status {
	var out []Status
	for _, s := range statuses {
		if s.Running {
			out = append(out, s)
		}
	}
	return out
}

// Models asks one server for its models: GET /models of its
// OpenAI-compatible API, else (Ollama) GET /api/tags. An error means it
// did not answer as a model server does.
func Models(ctx context.Context, s Server) ([]string, error) {
	if !Loopback(s.BaseURL) {
		return nil, fmt.Errorf("%s is not on this computer", s.BaseURL)
	}
	base := strings.TrimRight(s.BaseURL, "/")
	var list struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err := getJSON(ctx, base+"/models", &list)
	if err == nil && list.Data != nil {
		ids := make([]string, 0, len(*list.Data))
		for _, m := range *list.Data {
			ids = append(ids, m.ID)
		}
		return clean(ids), nil
	}
	if err == nil {
		err = errors.New("the answer lists no models")
	}
	if s.ID != "ollama" || ctx.Err() != nil {
		return nil, err
	}
	var tags struct {
		Models *[]struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if terr := getJSON(ctx, strings.TrimSuffix(base, "/v1")+"/api/tags", &tags); terr != nil || tags.Models == nil {
		return nil, err
	}
	names := make([]string, 0, len(*tags.Models))
	for _, m := range *tags.Models {
		names = append(names, m.Name)
	}
	return clean(names), nil
}

// clean drops empty and repeated names and keeps at most MaxModels.
func clean(ids []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] || len(out) == MaxModels {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(v)
}

// Tried names servers for a sentence: "Ollama (http://127.0.0.1:11434/v1),
// LM Studio (http://127.0.0.1:1234/v1)".
func Tried(servers []Server) string {
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name + " (" + s.BaseURL + ")"
	}
	return strings.Join(names, ", ")
}
