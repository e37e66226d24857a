package agentconn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
)

func refusal(t *testing.T, err error) *client.Refusal {
	t.Helper()
	var r *client.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	return r
}

func TestOwnershipAndGrace(t *testing.T) {
	h := newHarness(t, func(o *agentconn.Options) { o.Grace = 2 * time.Minute })
	ana := h.dial(t, client.Config{})
	st := h.waitStatus(t, "doc1", agentconn.PlannerAttached)
	if st.Login != "ana" || !st.Since.Equal(h.now) || st.Features != nil {
		t.Errorf("status = %+v", st)
	}
	if ev := recv(t, h.host.planner); ev.doc != "doc1" || ev.status.State != agentconn.PlannerAttached {
		t.Errorf("planner event = %+v", ev)
	}

	// Another account while ana is connected.
	r := refusal(t, second(h.tryDial(client.Config{Token: "tok-bo"})))
	if r.Code != "planner-attached" || r.CloseCode != 4409 ||
		r.Message != "ana is connected to this document. A document has one agent connected at a time." {
		t.Errorf("refusal = %+v", r)
	}
	// The same account on a second link is refused too: one Planner per document.
	if r := refusal(t, second(h.tryDial(client.Config{}))); r.Code != "planner-attached" {
		t.Errorf("same account, second link: %+v", r)
	}

	// ana detaches: 1000, and keeps the document for the grace period.
	if err := ana.Detach(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ce := ana.Err(); ce.Code != 1000 || ce.Reason != "detached" {
		t.Errorf("detach closed with %v", ce)
	}
	st = h.waitStatus(t, "doc1", agentconn.PlannerGrace)
	if want := h.now.Add(2 * time.Minute); st.Login != "ana" || !st.Until.Equal(want) {
		t.Errorf("grace status = %+v", st)
	}
	r = refusal(t, second(h.tryDial(client.Config{Token: "tok-bo"})))
	if r.Code != "planner-attached" || r.CloseCode != 4409 ||
		r.Message != "ana disconnected from this document and keeps it until 2026-10-10T19:42:00.000Z unless they connect again. A document has one agent connected at a time." {
		t.Errorf("refusal in grace = %+v", r)
	}
	// The owner comes back within the grace period.
	h.dial(t, client.Config{})
	h.waitStatus(t, "doc1", agentconn.PlannerAttached)
}

func second[A, B any](_ A, b B) B { return b }

func TestGraceEnds(t *testing.T) {
	h := newHarness(t, func(o *agentconn.Options) { o.Grace = 30 * time.Millisecond })
	ana := h.dial(t, client.Config{})
	_ = ana.Close() // a dropped socket, not a detach: the grace period applies too
	h.waitStatus(t, "doc1", agentconn.PlannerGrace)
	h.waitStatus(t, "doc1", agentconn.PlannerNone)
	h.dial(t, client.Config{Token: "tok-bo"})
	h.waitStatus(t, "doc1", agentconn.PlannerAttached)

	h0 := newHarness(t, func(o *agentconn.Options) { o.Grace = 0 })
	l := h0.dial(t, client.Config{})
	_ = l.Detach(context.Background())
	h0.waitStatus(t, "doc1", agentconn.PlannerNone)
	h0.dial(t, client.Config{Token: "tok-bo"})
}

func TestReleases(t *testing.T) {
	tests := []struct {
		name    string
		release func(h *harness)
		message string
	}{
		{"reset", func(h *harness) { h.srv.Reset("doc1") },
			"A repository writer reset this document's connection, so ana is no longer connected. Connect again to resume."},
		{"token rotated", func(h *harness) {
			if n := h.srv.RevokeBearer("tok-ana"); n != 1 {
				panic("RevokeBearer closed no link")
			}
		}, "This document's connection was released, so ana is no longer connected. Connect again to resume."},
		{"archived", func(h *harness) { h.srv.DocumentArchived("doc1") },
			"This document was archived, so ana is no longer connected. Restore it in Chopin, then connect again."},
		{"deleted", func(h *harness) { h.srv.DocumentDeleted("doc1") },
			"This document was deleted, so ana is no longer connected."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			c := h.rawAttached(t)
			tt.release(h)
			expectClose(t, c, `{"type":"refused","code":"access-revoked","message":"`+tt.message+`"}`, 4403, "access-revoked")
			// No grace period: anyone eligible attaches at once.
			h.waitStatus(t, "doc1", agentconn.PlannerNone)
			h.dial(t, client.Config{Token: "tok-bo"})
		})
	}
	t.Run("reset in grace", func(t *testing.T) {
		h := newHarness(t)
		l := h.dial(t, client.Config{})
		_ = l.Detach(context.Background())
		h.waitStatus(t, "doc1", agentconn.PlannerGrace)
		h.srv.Reset("doc1")
		h.waitStatus(t, "doc1", agentconn.PlannerNone)
	})
}

func TestPeriodicRecheck(t *testing.T) {
	h := newHarness(t, func(o *agentconn.Options) { o.Recheck = 20 * time.Millisecond })
	c := h.rawAttached(t)
	// An outage leaves the link open: a check fails with it, and the next
	// check comes, which it would not had the failure closed the link.
	h.host.set(func(f *fakeHost) { f.accessErr = errors.New("outage") })
	for recv(t, h.host.checked) == nil {
	}
	recv(t, h.host.checked)
	if st := h.srv.Status("doc1"); st.State != agentconn.PlannerAttached {
		t.Fatalf("an outage closed the link: %+v", st)
	}
	// ...and lost access closes it.
	h.host.set(func(f *fakeHost) { f.accessErr = nil; f.forbidden["ana"] = true })
	expectClose(t, c, `{"type":"refused","code":"access-revoked","message":"ana can no longer push to or administer octo/score, so the connection was closed."}`, 4403, "access-revoked")

	h2 := newHarness(t, func(o *agentconn.Options) { o.Recheck = 20 * time.Millisecond })
	c2 := h2.rawAttached(t)
	h2.host.set(func(f *fakeHost) { d := f.docs["doc1"]; d.Archived = true; f.docs["doc1"] = d })
	expectClose(t, c2, `{"type":"refused","code":"access-revoked","message":"This document was archived, so ana is no longer connected. Restore it in Chopin, then connect again."}`, 4403, "access-revoked")
}

func TestWithoutAttachedPlanner(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	req := agentconn.TurnRequest{Prompt: "@ana: hi", Sink: newSink()}
	refused := func(err error) *agentconn.TurnRefused {
		t.Helper()
		var r *agentconn.TurnRefused
		if !errors.As(err, &r) {
			t.Fatalf("StartTurn = %v, want a TurnRefused", err)
		}
		return r
	}
	r := refused(h.srv.StartTurn(ctx, "doc1", req))
	if r.Code != "planner-not-attached" || r.Message != "Connect a machine to get a reply. Connect an agent client to http://127.0.0.1:8787/documents/doc1 over the agent connection from a session in a checkout of octo/score." {
		t.Errorf("none attached: %+v", r)
	}

	l := h.dial(t, client.Config{})
	_ = l.Detach(ctx)
	h.waitStatus(t, "doc1", agentconn.PlannerGrace)
	r = refused(h.srv.StartTurn(ctx, "doc1", req))
	if r.Code != "planner-not-attached" || r.Message != "@ana's machine is offline, so this message wasn't sent. Send it again when it's back." {
		t.Errorf("in grace: %+v", r)
	}

	// A stale link found by the message's own check is closed, and the
	// message refused as without a Planner.
	c := h.rawAttached(t)
	h.host.set(func(f *fakeHost) { d := f.docs["doc1"]; d.Archived = true; f.docs["doc1"] = d })
	r = refused(h.srv.StartTurn(ctx, "doc1", req))
	if r.Code != "planner-not-attached" {
		t.Errorf("stale link: %+v", r)
	}
	_, code, _ := readClose(t, c)
	if code != 4403 {
		t.Errorf("stale link closed with %d", code)
	}
}

func TestBusy(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	h.dial(t, client.Config{Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		<-release
		return nil
	}}})
	s := newSink()
	if err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "@ana: one", Sink: s}); err != nil {
		t.Fatal(err)
	}
	err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "@ana: two", Sink: newSink()})
	var r *agentconn.TurnRefused
	if !errors.As(err, &r) || r.Code != "planner-busy" || r.Message != "chopin can't take messages while it works on this machine. Stop it to ask now." {
		t.Fatalf("second turn: %v", err)
	}
	close(release)
	if _, o := s.until(t); o.Status != "finished" {
		t.Fatalf("first turn: %+v", o)
	}
	// Free again once the turn ended.
	s2 := newSink()
	if err := h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "@ana: three", Sink: s2}); err != nil {
		t.Fatal(err)
	}
	s2.until(t)
}
