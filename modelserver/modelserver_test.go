package modelserver_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/modelserver"
)

func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

// TestProbe: real servers on loopback ports answer as each kind does; only
// those that list models count, the rest are said not to run, and an
// address off this computer is never asked.
func TestProbe(t *testing.T) {
	openai := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5"},{"id":"llama3.2"},{"id":"qwen2.5"},{"id":""}]}`)
	})
	ollamaOld := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"models":[{"name":"mistral:latest"}]}`)
	})
	page := serve(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><p>some other program")
	})
	huge := serve(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"`+strings.Repeat("x", 2<<20)+`"}]}`)
	})
	asked := false
	remote := serve(t, func(w http.ResponseWriter, r *http.Request) { asked = true })
	remote = strings.Replace(remote, "127.0.0.1", "192.0.2.1", 1) // never dialled: not loopback

	servers := []modelserver.Server{
		{ID: "llama.cpp", Name: "A", BaseURL: openai + "/v1"},
		{ID: "ollama", Name: "B", BaseURL: ollamaOld + "/v1"},
		{ID: "lmstudio", Name: "C", BaseURL: page + "/v1"},
		{ID: "vllm", Name: "D", BaseURL: closedURL(t) + "/v1"},
		{ID: "x", Name: "E", BaseURL: huge + "/v1"},
		{ID: "y", Name: "F", BaseURL: remote + "/v1"},
		{ID: "ollama", Name: "G", BaseURL: page + "/v1"},
	}
	got := modelserver.Probe(context.Background(), servers)
	want := []modelserver.Status{
		{Server: servers[0], Running: true, Models: []string{"qwen2.5", "llama3.2"}},
		{Server: servers[1], Running: true, Models: []string{"mistral:latest"}},
		{Server: servers[2], Models: []string{}},
		{Server: servers[3], Models: []string{}},
		{Server: servers[4], Models: []string{}},
		{Server: servers[5], Models: []string{}},
		{Server: servers[6], Models: []string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Probe =\n%+v\nwant\n%+v", got, want)
	}
	if asked {
		t.Error("an address off this computer was asked")
	}
	if r := modelserver.Running(got); len(r) != 2 || r[1].Name != "B" {
		t.Errorf("Running = %+v", r)
	}
}

func TestLoopback(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:11434/v1": true,
		"http://localhost:8080/v1":  true,
		"http://[::1]:1234/v1":      true,
		"https://127.0.0.2/v1":      true,
		"http://192.168.1.2:8000":   false,
		"http://example.com/v1":     false,
		"ftp://127.0.0.1/":          false,
		"127.0.0.1:11434":           false,
	} {
		if got := modelserver.Loopback(u); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", u, got, want)
		}
	}
}
