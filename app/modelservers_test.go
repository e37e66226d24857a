package app

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/chopin-desktop/chopin/modelserver"
)

// fakeLocalModelServer is a model server on a free loopback port that
// lists models as an OpenAI-compatible server does; its base URL ends
// in /v1.
func fakeLocalModelServer(t *testing.T, models ...string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		data := []map[string]string{}
		for _, m := range models {
			data = append(data, map[string]string{"id": m, "object": "model"})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

func closedLoopbackURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprintf("http://%s/v1", l.Addr())
}

// TestModelServersRoute: GET /api/model-servers says which of the usual
// model servers answers, with its models, and how to start the others;
// only the signed-in browser on Chopin's own page may ask.
func TestModelServersRoute(t *testing.T) {
	ta := startApp(t)
	running := fakeLocalModelServer(t, "qwen2.5", "llama3.2")
	servers := []modelserver.Server{
		{ID: "ollama", Name: "Ollama", BaseURL: closedLoopbackURL(t), Start: "ollama serve", Pull: "ollama pull qwen2.5"},
		{ID: "llama.cpp", Name: "llama.cpp", BaseURL: running, Start: "llama-server -m model.gguf --port 8080"},
	}
	ta.app.modelServers.Store(&servers)

	r := ta.Request(ta.Browser, "GET", "/api/model-servers", nil, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if r.Status != 200 {
		t.Fatalf("GET /api/model-servers: %d %s", r.Status, r.Body)
	}
	var got struct {
		Servers []map[string]any `json:"servers"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"id": "ollama", "name": "Ollama", "baseUrl": servers[0].BaseURL, "start": "ollama serve", "pull": "ollama pull qwen2.5", "running": false, "models": []any{}},
		{"id": "llama.cpp", "name": "llama.cpp", "baseUrl": running, "start": "llama-server -m model.gguf --port 8080", "running": true, "models": []any{"qwen2.5", "llama3.2"}},
	}
	if !reflect.DeepEqual(got.Servers, want) {
		t.Errorf("servers =\n%v\nwant\n%v", got.Servers, want)
	}

	if r := ta.Request(ta.Browser, "GET", "/api/model-servers", nil, map[string]string{"Sec-Fetch-Site": "same-site"}); r.Status != 403 || r.Code() != "forbidden-origin" {
		t.Errorf("from another page: %d %s", r.Status, r.Body)
	}
	bearer := &http.Client{Transport: bearerTransport{ta.Token}}
	if r := ta.Request(bearer, "GET", "/api/model-servers", nil, nil); r.Status != 401 {
		t.Errorf("with the agent token: %d %s", r.Status, r.Body)
	}
	if r := ta.Request(http.DefaultClient, "GET", "/api/model-servers", nil, nil); r.Status != 401 {
		t.Errorf("signed out: %d %s", r.Status, r.Body)
	}
}
