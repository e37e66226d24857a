package plannerhost_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/config"
)

// resumable-sessions and restart-notice against the real app, with a client
// written from the spec on a raw socket, so the test sees every frame in
// order and can drop the TCP connection abruptly.

// rawAgent is an agent connection driven frame by frame.
type rawAgent struct {
	t    testing.TB
	conn *websocket.Conn

	refused map[string]bool // isolated sessions it refused
}

func (ta *testApp) dialRawAgent(features string) *rawAgent {
	ta.T.Helper()
	h := http.Header{"Sec-WebSocket-Protocol": {wire.Subprotocol}, "Authorization": {"Bearer " + ta.Token()}}
	if features != "" {
		h.Set(wire.FeaturesHeader, features)
	}
	conn, _, err := websocket.DefaultDialer.Dial(ta.AgentURL(), h)
	if err != nil {
		ta.T.Fatalf("dial: %v", err)
	}
	ta.T.Cleanup(func() { conn.Close() })
	return &rawAgent{t: ta.T, conn: conn, refused: map[string]bool{}}
}

func (ra *rawAgent) send(m wire.Message) {
	ra.t.Helper()
	frame, err := wire.Encode(m)
	if err != nil {
		ra.t.Fatal(err)
	}
	if err := ra.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		ra.t.Fatalf("send %s: %v", m.MessageType(), err)
	}
}

// next reads the next message; a close fails the test.
func (ra *rawAgent) next() wire.Message {
	ra.t.Helper()
	m, err := ra.read()
	if err != nil {
		ra.t.Fatalf("read: %v", err)
	}
	return m
}

// read reads the next message. The document's descriptions, which the app
// asks for in isolated sessions, are refused and left out: these tests are
// about the Planner's own session.
func (ra *rawAgent) read() (wire.Message, error) {
	for {
		ra.conn.SetReadDeadline(time.Now().Add(apptest.Wait))
		_, frame, err := ra.conn.ReadMessage()
		if err != nil {
			return nil, err
		}
		m, err := wire.DecodeServerFrame(frame)
		if err != nil {
			ra.t.Fatalf("server frame %s: %v", frame, err)
		}
		switch m := m.(type) {
		case wire.Start:
			if m.Mode == wire.ModeIsolated {
				ra.refused[m.Session] = true
				ra.send(wire.StartFailed{Session: m.Session, Message: "This test client writes no descriptions."})
				continue
			}
		case wire.Destroy:
			if ra.refused[m.Session] {
				continue
			}
		}
		return m, nil
	}
}

// closed reads until the server closes and returns the close code.
func (ra *rawAgent) closed() (int, []wire.Message) {
	ra.t.Helper()
	var got []wire.Message
	for {
		m, err := ra.read()
		if err != nil {
			if ce, ok := err.(*websocket.CloseError); ok {
				return ce.Code, got
			}
			ra.t.Fatalf("read: %v", err)
		}
		got = append(got, m)
	}
}

// drop cuts the TCP connection without a close frame.
func (ra *rawAgent) drop() { ra.conn.UnderlyingConn().Close() }

func (ra *rawAgent) attach(document string) wire.Attached {
	ra.t.Helper()
	ra.send(wire.Attach{Version: 1, Document: document})
	a, ok := ra.next().(wire.Attached)
	if !ok {
		ra.t.Fatal("not attached")
	}
	return a
}

// question opens a session through a person's @chopin message, asks a
// confirmation in it as request r1, reports a live run, and ends the turn:
// the session stays for its question and its run. It returns the session
// and the Decision's id.
func (ta *testApp) question(ra *rawAgent, channelID string) (session, decision string) {
	ta.T.Helper()
	apptest.Want(ta.T, ta.Do("POST", "/api/channels/"+channelID+"/messages", map[string]string{"text": "@chopin go"}), 201, "")
	start := ra.next().(wire.Start)
	ra.send(wire.Started{Session: start.Session})
	turn := ra.next().(wire.Turn)
	ra.send(wire.InputRequest{Request: "r1", Session: start.Session,
		Input: wire.Input{Method: wire.MethodConfirm, Title: "Ship it?"}})
	ra.send(wire.Runs{Session: start.Session, Active: []string{"run1"}, Paused: []string{},
		Cards: []wire.RunCard{{ID: "run1", Name: "Build", Status: "running", Started: 1, Updated: 1, Stages: []wire.Stage{}}}})
	ra.send(wire.TurnEnd{Session: start.Session, Turn: turn.Turn, Status: "finished"})
	var open []map[string]any
	ta.eventually(func() bool {
		var body struct{ Decisions []map[string]any }
		ta.Do("GET", "/api/channels/"+channelID+"/decisions", nil).JSON(ta.T, &body)
		open = open[:0]
		for _, d := range body.Decisions {
			if d["status"] == "open" {
				open = append(open, d)
			}
		}
		return len(open) == 1
	})
	ta.eventually(func() bool { // the run is reported too
		var st struct{ Runs []wire.RunCard }
		ta.Do("GET", "/api/channels/"+channelID+"/planner", nil).JSON(ta.T, &st)
		return len(st.Runs) == 1
	})
	return start.Session, open[0]["id"].(string)
}

func (ta *testApp) plannerState(channelID string) string {
	var st struct{ State string }
	ta.Do("GET", "/api/channels/"+channelID+"/planner", nil).JSON(ta.T, &st)
	return st.State
}

// eventually polls cond until it holds; it fails the test after apptest.Wait.
func (ta *testApp) eventually(cond func() bool) {
	ta.T.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for !cond() {
		if time.Now().After(deadline) {
			ta.T.Fatal("the condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// resumeAndCheck resumes the session waiting on r1 and checks the server's
// answer: resumed listing r1, the held Stop first, then the held answer.
func resumeAndCheck(t *testing.T, ra *rawAgent, session string) {
	t.Helper()
	ra.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	got := ra.next()
	wantResumed := wire.Resumed{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}}
	if !reflect.DeepEqual(got, wantResumed) {
		t.Fatalf("got %#v, want %#v", got, wantResumed)
	}
	stop, ok := ra.next().(wire.Stop)
	if !ok || stop.Session != session || stop.Run != "" {
		t.Fatalf("want the held stop first, got %#v", stop)
	}
	res, ok := ra.next().(wire.InputResult)
	if !ok || res.Request != "r1" || res.Status != "answered" || string(res.Value) != "true" {
		t.Fatalf("want r1's answer, got %#v", res)
	}
	ra.send(wire.ControlResult{Request: stop.Request, OK: true})
	ra.send(wire.InputReceived{Request: "r1"})
}

// checkDelivered drops the link once more and resumes: the acknowledged
// answer and the answered Stop are not sent again.
func checkDelivered(t *testing.T, ta *testApp, ra *rawAgent, channelID, session string) {
	t.Helper()
	// runs confirms the client's frames before it were handled.
	ra.send(wire.Runs{Session: session, Active: []string{"run1"}, Paused: []string{},
		Cards: []wire.RunCard{{ID: "run1", Name: "Build", Status: "running", Started: 1, Updated: 2, Stages: []wire.Stage{}}}})
	ra.drop()
	ta.eventually(func() bool { return ta.plannerState(channelID) == "disconnected" })
	resumeOnly(t, ta, channelID, session, wire.Resumed{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{}}}})
}

// questionAcrossRestart starts Chopin on cfg, attaches a raw agent with
// features that asks a question, restarts Chopin (the link closes with
// 1012) and returns the new process with the question's session and
// Decision.
func questionAcrossRestart(t *testing.T, cfg config.Config, features string) (*testApp, apptest.Document, string, string) {
	t.Helper()
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ra := ta.dialRawAgent(features)
	ra.attach(ch.ID)
	session, decision := ta.question(ra, ch.ID)
	ta.Stop()
	if code, _ := ra.closed(); code != websocket.CloseServiceRestart {
		t.Fatalf("closed %d", code)
	}
	return startAppWith(t, cfg), ch, session, decision
}

// resumeOnly resumes session (naming request r1) on a new resumable link,
// requires exactly want back and nothing more, and detaches.
func resumeOnly(t *testing.T, ta *testApp, channelID, session string, want wire.Resumed) {
	t.Helper()
	again := ta.dialRawAgent("resumable-sessions")
	again.attach(channelID)
	again.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	if got := again.next(); !reflect.DeepEqual(got, want) {
		t.Fatalf("resume: got %#v, want %#v", got, want)
	}
	again.send(wire.Detach{})
	if code, extra := again.closed(); code != websocket.CloseNormalClosure || len(extra) != 0 {
		t.Fatalf("after the resume: %#v then close %d", extra, code)
	}
}

// TestAgentResumeAfterDrop: a resumable link whose TCP connection drops with
// a question open keeps its work; the question is answered over HTTP and a
// Stop pressed while it is away; the client resumes and receives the Stop
// first and the answer exactly once.
func TestAgentResumeAfterDrop(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ra := ta.dialRawAgent("resumable-sessions")
	if a := ra.attach(ch.ID); !reflect.DeepEqual(a.Features, []string{"resumable-sessions"}) {
		t.Fatalf("features %v", a.Features)
	}
	session, decision := ta.question(ra, ch.ID)

	ra.drop()
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "disconnected" })
	var st struct {
		State, Login string
		Runs         []wire.RunCard
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &st)
	if st.Login != "ada" || len(st.Runs) != 1 || st.Runs[0].Status != "running" {
		t.Errorf("disconnected planner %+v", st)
	}
	// @chopin is refused as without an attached Planner, naming the machine offline.
	if tr := ta.app.Agent().Refusal(context.Background(), ch.ID); tr == nil ||
		tr.Message != "@ada's machine is offline, so this message wasn't sent. Send it again when it's back." {
		t.Errorf("refusal %+v", tr)
	}
	// The hold is stored, without a hand-over window: a crash keeps it.
	if holds, err := ta.app.Store().LinkHolds(context.Background()); err != nil || len(holds) != 1 || holds[0].Window {
		t.Errorf("stored holds %+v %v", holds, err)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+decision+"/answer", map[string]any{"yes": true}), 200, "")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil), 200, "")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil), 200, "") // pressed twice, sent once

	back := ta.dialRawAgent("resumable-sessions")
	back.attach(ch.ID)
	resumeAndCheck(t, back, session)
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "attached" })
	if holds, _ := ta.app.Store().LinkHolds(context.Background()); len(holds) != 0 {
		t.Errorf("a resumed hold is still stored: %+v", holds)
	}
	checkDelivered(t, ta, back, ch.ID, session)
}

// TestAgentResumeAfterRestart: a real process restart with a resumable
// client. The old process tells the client it is restarting and closes with
// 1012, withdrawing nothing; the new process rebuilds the hold from SQLite,
// shows the Planner attached inside the hand-over window, waits on the same
// Decision, and gives the client its Stop first and its answer once.
func TestAgentResumeAfterRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.HandoverPlannerWindow = time.Hour // the window never ends during the test
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ra := ta.dialRawAgent("resumable-sessions, restart-notice")
	ra.attach(ch.ID)
	session, decision := ta.question(ra, ch.ID)

	ta.Stop()
	code, frames := ra.closed()
	if code != websocket.CloseServiceRestart || len(frames) != 1 ||
		!reflect.DeepEqual(frames[0], wire.Restarting{ReconnectWithinMs: time.Hour.Milliseconds()}) {
		t.Fatalf("closed %d after %#v", code, frames)
	}

	ta2 := startAppWith(t, cfg)
	var st struct {
		State string
		Runs  []wire.RunCard
	}
	ta2.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &st)
	if st.State != "attached" || len(st.Runs) != 1 || st.Runs[0].Status != "running" {
		t.Errorf("inside the window the planner shows %+v", st)
	}
	if tr := ta2.app.Agent().Refusal(context.Background(), ch.ID); tr == nil ||
		tr.Message != "Still connecting to @ada's machine, so this message wasn't sent. Send it again in a moment." {
		t.Errorf("refusal inside the window %+v", tr)
	}
	var body struct{ Decisions []map[string]any }
	ta2.Do("GET", "/api/channels/"+ch.ID+"/decisions", nil).JSON(t, &body)
	if len(body.Decisions) != 1 || body.Decisions[0]["status"] != "open" {
		t.Fatalf("decisions after the restart %v", body.Decisions)
	}
	apptest.Want(t, ta2.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+decision+"/answer", map[string]any{"yes": true}), 200, "")
	apptest.Want(t, ta2.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil), 200, "")

	back := ta2.dialRawAgent("resumable-sessions, restart-notice")
	back.attach(ch.ID)
	resumeAndCheck(t, back, session)
	checkDelivered(t, ta2, back, ch.ID, session)
}

// TestAgentHandoverWindowEnds: when the hand-over window ends without a
// resume, the rebuilt hold is no longer shown attached: it is disconnected,
// and kept for the client's return.
func TestAgentHandoverWindowEnds(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.HandoverPlannerWindow = 50 * time.Millisecond
	ta2, ch, session, _ := questionAcrossRestart(t, cfg, "resumable-sessions")
	ta2.eventually(func() bool { return ta2.plannerState(ch.ID) == "disconnected" })
	back := ta2.dialRawAgent("resumable-sessions")
	back.attach(ch.ID)
	back.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	wantResumed := wire.Resumed{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}}
	if got := back.next(); !reflect.DeepEqual(got, wantResumed) {
		t.Fatalf("got %#v, want %#v", got, wantResumed)
	}
}

// TestAgentInputReceivedWithoutFeature: input-received belongs to
// resumable-sessions; a client that did not offer it and sends it commits a
// protocol violation.
func TestAgentInputReceivedWithoutFeature(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ra := ta.dialRawAgent("")
	ra.attach(ch.ID)
	ra.send(wire.InputReceived{Request: "r1"})
	code, frames := ra.closed()
	if e, ok := frames[0].(wire.ProtocolError); code != websocket.ClosePolicyViolation || len(frames) != 1 || !ok || e.Code != "protocol" {
		t.Fatalf("closed %d after %#v", code, frames)
	}
}

// TestAgentResumeTakesOverUnnoticedDrop: while the server still counts a
// resumable link as attached, a new resumable link of the same account is
// attached unconfirmed. A first message other than a resume naming the old
// link's session is refused with planner-attached and leaves the old link
// alone; a resume naming it closes the old link, keeps its work and gives it
// to the new one.
func TestAgentResumeTakesOverUnnoticedDrop(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	old := ta.dialRawAgent("resumable-sessions")
	old.attach(ch.ID)
	session, decision := ta.question(old, ch.ID)

	other := ta.dialRawAgent("resumable-sessions")
	other.attach(ch.ID)
	other.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: "s-unknown", Requests: []string{}}}})
	code, frames := other.closed()
	if r, ok := frames[0].(wire.Refused); code != 4409 || !ok || r.Code != "planner-attached" {
		t.Fatalf("closed %d after %#v", code, frames)
	}

	back := ta.dialRawAgent("resumable-sessions")
	back.attach(ch.ID)
	back.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	wantResumed := wire.Resumed{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}}
	if got := back.next(); !reflect.DeepEqual(got, wantResumed) {
		t.Fatalf("got %#v, want %#v", got, wantResumed)
	}
	if code, _ := old.closed(); code != websocket.CloseGoingAway {
		t.Errorf("the old link closed with %d", code)
	}
	// The question moved with the session: its answer reaches the new link.
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+decision+"/answer", map[string]any{"yes": false}), 200, "")
	if res, ok := back.next().(wire.InputResult); !ok || res.Request != "r1" || string(res.Value) != "false" {
		t.Fatalf("want r1's answer, got %#v", res)
	}
}

// TestAgentHoldEndsForGood: a client that attaches over a hold and sends
// anything but resume first ends it: its question is withdrawn and its run
// shows as stopped.
func TestAgentHoldEndsForGood(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ra := ta.dialRawAgent("resumable-sessions")
	ra.attach(ch.ID)
	ta.question(ra, ch.ID)
	ra.drop()
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "disconnected" })

	fresh := ta.dialRawAgent("resumable-sessions")
	fresh.attach(ch.ID)
	fresh.send(wire.Runs{Session: "s-other", Active: []string{}, Paused: []string{}, Cards: []wire.RunCard{}})
	ta.eventually(func() bool {
		var body struct{ Decisions []map[string]any }
		ta.Do("GET", "/api/channels/"+ch.ID+"/decisions", nil).JSON(ta.T, &body)
		return len(body.Decisions) == 1 && body.Decisions[0]["status"] == "expired"
	})
	var st struct {
		State string
		Runs  []wire.RunCard
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &st)
	if st.State != "attached" || len(st.Runs) != 1 || st.Runs[0].Status != "stopped" {
		t.Errorf("planner %+v", st)
	}
}
