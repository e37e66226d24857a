package plannerhost_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/plannerhost"
)

// TestAgentRefusedBeforeUpgrade: every refusal the spec lists before the
// upgrade, in its order, over plain HTTP on the real app.
func TestAgentRefusedBeforeUpgrade(t *testing.T) {
	ta := startApp(t)
	upgrade := func(extra map[string]string) map[string]string {
		h := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
			"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "chopin.agent.v1",
			"Authorization": "Bearer " + ta.Token()}
		for k, v := range extra {
			if v == "" {
				delete(h, k)
			} else {
				h[k] = v
			}
		}
		return h
	}
	client := &http.Client{}
	tests := []struct {
		name   string
		method string
		header map[string]string
		status int
		body   string
	}{
		{"no subprotocol", "GET", upgrade(map[string]string{"Sec-WebSocket-Protocol": "", "Authorization": ""}), 426,
			`{"code":"subprotocol-required","supported":["chopin.agent.v1"]}` + "\n"},
		{"another subprotocol", "GET", upgrade(map[string]string{"Sec-WebSocket-Protocol": "chopin.agent.v2"}), 426,
			`{"code":"subprotocol-required","supported":["chopin.agent.v1"]}` + "\n"},
		{"plain GET", "GET", map[string]string{}, 426, `{"code":"subprotocol-required","supported":["chopin.agent.v1"]}` + "\n"},
		{"foreign Origin before the bearer", "GET", upgrade(map[string]string{"Origin": "http://evil.example", "Authorization": ""}), 403, ""},
		{"no bearer", "GET", upgrade(map[string]string{"Authorization": ""}), 401,
			`{"code":"unauthorized","message":"Send Authorization: Bearer \u003cagent token\u003e. Run ` + "`chopin token`" + ` to print it."}` + "\n"},
		{"wrong bearer", "GET", upgrade(map[string]string{"Authorization": "Bearer chopin_a_" + strings.Repeat("x", 43)}), 401, ""},
		{"a browser's cookie is not a bearer", "GET", upgrade(map[string]string{"Authorization": "", "Origin": ta.app.URL()}), 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ta.Request(client, tc.method, "/api/v1/agent", nil, tc.header)
			if r.Status != tc.status || tc.body != "" && string(r.Body) != tc.body {
				t.Errorf("got %d %s, want %d %s", r.Status, r.Body, tc.status, tc.body)
			}
		})
	}
	// With the app's own Origin and the token it upgrades.
	l := ta.attachDocument(t)
	l.Close()
}

// attachDocument makes a document and attaches an idle Planner to it.
func (ta *testApp) attachDocument(t *testing.T) *client.Link {
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	return ta.attach(ch.ID, client.Handler{})
}

// TestAgentOff: with AGENT=off the endpoint is a 404 to everything, checked
// before anything else.
func TestAgentOff(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Agent = false
	ta := startAppWith(t, cfg)
	for _, method := range []string{"GET", "POST", "DELETE"} {
		r := ta.Request(&http.Client{}, method, "/api/v1/agent", nil, map[string]string{
			"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
			"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": "http://evil.example"})
		apptest.Want(t, r, 404, "not-found")
	}
	_, err := ta.dialAgent("anything", client.Handler{})
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status != 404 {
		t.Errorf("dial with AGENT=off: %v", err)
	}
}

// TestAgentAttachByIDAndURL: a document is named by its ID or its Chopin URL,
// absolute or a path, by its current slug or a former one.
func TestAgentAttachByIDAndURL(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch plan")
	oldURL := ch.URL
	apptest.Want(t, ta.Do("PATCH", "/api/channels/"+ch.ID, map[string]string{"title": "Rocket plan"}), 200, "")

	for _, ref := range []string{ch.ID, ta.app.URL() + "/documents/octo/plans/rocket-plan", "/documents/octo/plans/rocket-plan",
		oldURL, ta.app.URL() + oldURL, "/documents/OCTO/plans/Rocket-Plan"} {
		l, err := ta.dialAgent(ref, client.Handler{})
		if err != nil {
			t.Errorf("attach %s: %v", ref, err)
			continue
		}
		if d := l.Attached().Document; d.ID != ch.ID || d.Title != "Rocket plan" || d.URL != ta.app.URL()+"/documents/octo/plans/rocket-plan" {
			t.Errorf("attach %s: %+v", ref, d)
		}
		l.Detach(t.Context())
		ta.Do("POST", "/api/channels/"+ch.ID+"/agent/reset", nil) // end the grace period
	}

	for _, ref := range []string{"/documents/octo/plans/nothing", "http://other.example/documents/octo/plans/rocket-plan",
		"/documents/octo/none/rocket-plan", "00000000-0000-4000-8000-000000000000", "rocket-plan"} {
		_, err := ta.dialAgent(ref, client.Handler{})
		var rf *client.Refusal
		if !errors.As(err, &rf) || rf.Code != "document-unavailable" || rf.CloseCode != 4404 {
			t.Errorf("attach %s: %v", ref, err)
		}
	}

	// An archived document is refused with document-archived.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	_, err := ta.dialAgent(ch.ID, client.Handler{})
	var rf *client.Refusal
	if !errors.As(err, &rf) || rf.Code != "document-archived" || rf.CloseCode != 4404 {
		t.Errorf("attach archived: %v", err)
	}
}

// TestAgentOneAtATime: a second attach is refused with planner-attached in
// the spec's words, naming the holder; after a detach the owner keeps the
// document for the grace period.
func TestAgentOneAtATime(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	first := ta.attach(ch.ID, client.Handler{})

	_, err := ta.dialAgent(ch.ID, client.Handler{})
	var rf *client.Refusal
	if !errors.As(err, &rf) || rf.Code != "planner-attached" || rf.CloseCode != 4409 ||
		rf.Message != "ada is connected to this document. A document has one agent connected at a time." {
		t.Fatalf("second attach: %v", err)
	}
	if err := first.Detach(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The same account comes back within its grace period.
	again := ta.attach(ch.ID, client.Handler{})
	again.Detach(t.Context())
}

// TestAgentRevoked: archiving the document, resetting its Planner and
// rotating the token each close the link with access-revoked (4403) and the
// spec's words.
func TestAgentRevoked(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")

	l := ta.attach(ch.ID, client.Handler{})
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	wantRefused(t, closed(t, l), "access-revoked", 4403,
		"This document was archived, so ada is no longer connected. Restore it in Chopin, then connect again.")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/restore", nil), 200, "")

	l = ta.attach(ch.ID, client.Handler{})
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/agent/reset", nil), 204, "")
	wantRefused(t, closed(t, l), "access-revoked", 4403,
		"A repository writer reset this document's connection, so ada is no longer connected. Connect again to resume.")
	// A reset ends the ownership at once: attaching again works.
	l = ta.attach(ch.ID, client.Handler{})

	old := ta.Token()
	if _, err := instance.RotateAgentToken(ta.app.Config().ConfigDir); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, closed(t, l), "access-revoked", 4403,
		"This document's connection was released, so ada is no longer connected. Connect again to resume.")
	_, err := client.Dial(t.Context(), client.Config{URL: ta.AgentURL(), Token: old, Document: ch.ID})
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status != 401 {
		t.Errorf("dial with the old token: %v", err)
	}
	ta.attach(ch.ID, client.Handler{}) // the new token works

	// Deleting the document closes the link too.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	apptest.Want(t, ta.Do("DELETE", "/api/channels/"+ch.ID, nil), 204, "")
}

// TestAgentShutdown: quitting closes the link with 1012 (restarting).
func TestAgentShutdown(t *testing.T) {
	ta := startApp(t)
	l := ta.attachDocument(t)
	ta.Stop()
	if ce := closed(t, l); ce.Code != 1012 {
		t.Errorf("closed %+v", ce)
	}
}

// TestPlannerStatusRoute: GET .../planner in each state, and the refusal of
// an @chopin message in each state's words.
func TestPlannerStatusRoute(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.PlannerAttachGrace = time.Hour
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	status := func() plannerhost.Status {
		var p plannerhost.Status
		r := ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil)
		apptest.Want(t, r, 200, "")
		r.JSON(t, &p)
		return p
	}
	say := func(status int, code, message string) {
		t.Helper()
		r := ta.Do("POST", "/api/channels/"+ch.ID+"/messages", map[string]string{"text": "@chopin hello"})
		apptest.Want(t, r, status, code)
		if message != "" && !strings.Contains(string(r.Body), `"message":"`+message+`"`) {
			t.Errorf("refusal %s, want %q", r.Body, message)
		}
	}

	if p := status(); p.State != "none" || p.Login != "" || p.Runs == nil {
		t.Errorf("none: %+v", p)
	}
	say(409, "planner-not-attached", "Connect a machine to get a reply. Connect an agent client to "+ta.app.URL()+
		"/documents/octo/plans/plan over the agent connection from a session in a checkout of octo/plans.")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil), 409, "planner-not-attached")

	ts := newTurns()
	l := ta.attach(ch.ID, ts.handler())
	if p := status(); p.State != "attached" || p.Login != "ada" || p.Since == "" {
		t.Errorf("attached: %+v", p)
	}
	// While the Planner works, a message is refused, not queued.
	say(201, "", "")
	turn := ts.next(t)
	say(409, "planner-busy", "chopin can't take messages while it works on this machine. Stop it to ask now.")
	// Stop Planner aborts the turn; the reply ends stopped.
	var ctl struct {
		Aborted bool `json:"aborted"`
	}
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", map[string]string{})
	apptest.Want(t, r, 200, "")
	r.JSON(t, &ctl)
	if !ctl.Aborted {
		t.Errorf("stop: %+v", ctl)
	}
	<-turn.ctx.Done()
	if reply := ta.finishedReply(ch.ID); reply.Status != "stopped" {
		t.Errorf("reply %+v", reply)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/planner/resume", nil), 200, "")

	l.Detach(t.Context())
	p := status()
	if p.State != "grace" || p.Login != "ada" || p.Until == "" {
		t.Errorf("grace: %+v", p)
	}
	say(409, "planner-not-attached", "@ada's machine is offline, so this message wasn't sent. Send it again when it's back.")

	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/agent/reset", nil), 204, "")
	if p := status(); p.State != "none" {
		t.Errorf("after reset: %+v", p)
	}
}
