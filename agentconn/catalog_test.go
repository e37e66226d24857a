package agentconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

func catalogClient(t *testing.T, h *harness, features []string, handler client.Handler) *client.Link {
	t.Helper()
	return h.dial(t, client.Config{Features: features, Handler: handler})
}

func waitCatalog(t *testing.T, h *harness, ok func(*wire.Catalog) bool) *wire.Catalog {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		c := h.srv.Catalog("doc1")
		if ok(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("catalog is %+v", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCapabilitiesReport(t *testing.T) {
	h := newHarness(t)
	got := make(chan wire.Turn, 2)
	l := catalogClient(t, h, []string{"capability-catalog"}, client.Handler{Turn: func(_ context.Context, tr *client.Turn) error {
		got <- tr.Message
		return nil
	}})
	if !l.Has("capability-catalog") {
		t.Fatalf("attached.features = %v", l.Attached().Features)
	}
	if h.srv.Catalog("doc1") != nil {
		t.Fatal("a catalog before any report")
	}
	must(t, l.ReportCapabilities(json.RawMessage(`{"models":{"available":[{"id":"","name":"x"},{"id":"m1","name":"M1","thinkingLevels":["low","xhigh"]}]},"odd":true}`)))
	c := waitCatalog(t, h, func(c *wire.Catalog) bool { return c != nil })
	if len(c.Models.Available) != 1 || c.Models.Available[0].ID != "m1" {
		t.Fatalf("catalog %+v", c.Models)
	}
	// A report replaces the last whole; {} withdraws everything.
	must(t, l.ReportCapabilities(json.RawMessage(`{}`)))
	waitCatalog(t, h, func(c *wire.Catalog) bool { return c != nil && c.Models == nil })

	// The turn carries model and thinkingLevel as the app chose them.
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Model: "m1", ThinkingLevel: "xhigh", Sink: s}))
	if tm := recv(t, got); tm.Model != "m1" || tm.ThinkingLevel != "xhigh" {
		t.Fatalf("turn model %q level %q", tm.Model, tm.ThinkingLevel)
	}
	s.until(t)

	l.Close()
	h.waitStatus(t, "doc1", agentconn.PlannerGrace)
	if h.srv.Catalog("doc1") != nil {
		t.Fatal("a catalog outlived its link")
	}
}

func TestCapabilitiesWithoutFeature(t *testing.T) {
	h := newHarness(t)
	got := make(chan wire.Turn, 1)
	l := catalogClient(t, h, nil, client.Handler{Turn: func(_ context.Context, tr *client.Turn) error {
		got <- tr.Message
		return nil
	}})
	// Without the feature a turn never carries thinkingLevel.
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Model: "m1", ThinkingLevel: "high", ChatMessage: "m", Retry: true,
		Attachments: []wire.Attachment{{ID: "a", Name: "n", Kind: "file", MediaType: "text/plain", Size: 1, Data: "eA=="}}, Sink: s}))
	if tm := recv(t, got); tm.Model != "m1" || tm.ThinkingLevel != "" || tm.ChatMessage != "" || tm.Retry || tm.Attachments != nil {
		t.Fatalf("turn %+v", tm)
	}
	s.until(t)
	must(t, l.ReportCapabilities(json.RawMessage(`{}`)))
	ce := waitDone(t, l)
	if ce.Code != 1008 || ce.Protocol == nil || ce.Protocol.Code != "protocol" {
		t.Fatalf("closed %+v", ce)
	}
}

func TestCapabilitiesWrongType(t *testing.T) {
	h := newHarness(t)
	l := catalogClient(t, h, []string{"capability-catalog"}, client.Handler{})
	must(t, l.ReportCapabilities(json.RawMessage(`{"models":{"available":[{"id":7,"name":"x"}]}}`)))
	ce := waitDone(t, l)
	if ce.Code != 1008 || ce.Protocol == nil || ce.Protocol.Code != "malformed-message" ||
		!strings.Contains(ce.Protocol.Message, "catalog.models.available[0].id must be a string") {
		t.Fatalf("closed %+v %+v", ce, ce.Protocol)
	}
}

func TestSteer(t *testing.T) {
	h := newHarness(t)
	steered := make(chan string, 4)
	release := make(chan struct{})
	l := catalogClient(t, h, []string{"steer-turn"}, client.Handler{
		Turn: func(ctx context.Context, tr *client.Turn) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		},
		Steer: func(tr *client.Turn, prompt string) (bool, string) {
			steered <- prompt
			if strings.Contains(prompt, "refuse") {
				return false, "The turn is finishing."
			}
			return true, ""
		},
	})
	if !l.Has("steer-turn") {
		t.Fatal("steer-turn not granted")
	}
	if _, err := h.srv.Steer(context.Background(), "doc1", "@bo: hi"); !errors.Is(err, agentconn.ErrNoTurn) {
		t.Fatalf("idle Steer = %v", err)
	}
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: s}))
	if tr := h.srv.Refusal(context.Background(), "doc1"); tr != nil {
		t.Fatalf("a busy Planner with steer-turn refuses %+v", tr)
	}
	var out agentconn.SteerOutcome
	deadline := time.Now().Add(wait)
	for {
		var err error
		out, err = h.srv.Steer(context.Background(), "doc1", "@bo: also this")
		must(t, err)
		if out.OK || out.Message != "The Planner's turn was starting or stopping, so it could not read the message." || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond) // the turn is still being started
	}
	if !out.OK || !out.Answered || recv(t, steered) != "@bo: also this" {
		t.Fatalf("steer %+v", out)
	}
	out, err := h.srv.Steer(context.Background(), "doc1", "@bo: refuse this")
	if err != nil || out.OK || !out.Answered || out.Message != "The turn is finishing." {
		t.Fatalf("refused steer %+v %v", out, err)
	}
	close(release)
	s.until(t)
}

func TestSteerWithoutFeature(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	defer close(release)
	catalogClient(t, h, nil, client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}})
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: newSink()}))
	const busy = "chopin can't take messages while it works on this machine. Stop it to ask now."
	_, err := h.srv.Steer(context.Background(), "doc1", "@bo: hi")
	var tr *agentconn.TurnRefused
	if !errors.As(err, &tr) || tr.Code != "planner-busy" || tr.Message != busy {
		t.Fatalf("Steer without the feature = %v", err)
	}
	if r := h.srv.Refusal(context.Background(), "doc1"); r == nil || r.Message != busy {
		t.Fatalf("Refusal = %+v", r)
	}
}

// With retry-turn a turn names the Chat message it answers, and retry.
func TestRetryTurnFields(t *testing.T) {
	h := newHarness(t)
	got := make(chan wire.Turn, 1)
	l := catalogClient(t, h, []string{"retry-turn"}, client.Handler{Turn: func(_ context.Context, tr *client.Turn) error {
		got <- tr.Message
		return nil
	}})
	if !l.Has("retry-turn") {
		t.Fatal("retry-turn not granted")
	}
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "@ana: Hey there!", ChatMessage: "0f8c", Retry: true, ThinkingLevel: "high", Sink: s}))
	if tm := recv(t, got); tm.ChatMessage != "0f8c" || !tm.Retry || tm.ThinkingLevel != "" {
		t.Fatalf("turn %+v", tm)
	}
	s.until(t)
}
