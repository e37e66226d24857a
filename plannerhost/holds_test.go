package plannerhost_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/plannerhost"
)

// What ends a resumable link's kept work, the answers nobody waits on any
// more, and what Chat says of Stop, against the real app
// (spec/agent-connection.md, "Resuming after a dropped link", "After a
// server restart"). The raw client and its helpers are agent_resume_test.go's.

// decisionStatuses lists the document's Decisions' statuses, oldest first.
func (ta *testApp) decisionStatuses(channelID string) []string {
	var body struct{ Decisions []map[string]any }
	ta.Do("GET", "/api/channels/"+channelID+"/decisions", nil).JSON(ta.T, &body)
	var out []string
	for _, d := range body.Decisions {
		out = append(out, d["status"].(string))
	}
	return out
}

// idle waits until the attached Planner's turn has ended.
func (ta *testApp) idle(channelID string) {
	ta.T.Helper()
	ta.eventually(func() bool { return ta.app.Agent().Refusal(context.Background(), channelID) == nil })
}

// askedShipIt is Chat's line for the question ta.question asks.
const askedShipIt = "The Planner asked a question and waits for an answer in Decisions: “Ship it?”."

// chatLines are the document's Chat system lines.
func (ta *testApp) chatLines(channelID string) []string {
	var out []string
	for _, m := range ta.chatSnapshot(channelID) {
		if m["role"] == "system" {
			out = append(out, m["text"].(string))
		}
	}
	return out
}

// refusedAttach attaches and expects a refusal; it returns it with the close code.
func (ra *rawAgent) refusedAttach(document string) (wire.Refused, int) {
	ra.t.Helper()
	ra.send(wire.Attach{Version: 1, Document: document})
	code, frames := ra.closed()
	if len(frames) != 1 {
		ra.t.Fatalf("closed %d after %#v", code, frames)
	}
	r, ok := frames[0].(wire.Refused)
	if !ok {
		ra.t.Fatalf("want refused, got %#v", frames[0])
	}
	return r, code
}

// parked opens a question with a live run on a resumable link and drops it:
// the document's Planner is disconnected with its work kept.
func (ta *testApp) parked(channelID string) (session, decision string) {
	ta.T.Helper()
	ra := ta.dialRawAgent("resumable-sessions")
	ra.attach(channelID)
	session, decision = ta.question(ra, channelID)
	ra.drop()
	ta.eventually(func() bool { return ta.plannerState(channelID) == "disconnected" })
	return session, decision
}

// wantEnded checks a hold ended for good: its Decision expired, its run
// shown stopped (when the document is still there) and its row gone.
func (ta *testApp) wantEnded(channelID string, document bool) {
	ta.T.Helper()
	ta.eventually(func() bool {
		holds, err := ta.app.Store().LinkHolds(context.Background())
		return err == nil && len(holds) == 0
	})
	if !document {
		return
	}
	if got := ta.decisionStatuses(channelID); !reflect.DeepEqual(got, []string{"expired"}) {
		ta.T.Errorf("decisions %v", got)
	}
	var st struct {
		State string
		Runs  []wire.RunCard
	}
	ta.Do("GET", "/api/channels/"+channelID+"/planner", nil).JSON(ta.T, &st)
	if st.State != "none" || len(st.Runs) != 1 || st.Runs[0].Status != "stopped" {
		ta.T.Errorf("planner after the end %+v", st)
	}
}

// resumeFindsNothing attaches again and resumes the ended session: resumed
// lists nothing.
func (ta *testApp) resumeFindsNothing(channelID, session string) {
	ta.T.Helper()
	back := ta.dialRawAgent("resumable-sessions")
	back.attach(channelID)
	back.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	if got, want := back.next(), (wire.Resumed{Sessions: []wire.ResumedSession{}}); !reflect.DeepEqual(got, want) {
		ta.T.Fatalf("resume after the end: got %#v, want %#v", got, want)
	}
}

// TestAgentHoldEndedByArchive: archiving the document ends the kept work for
// good; attaching again is refused with document-archived (4404).
func TestAgentHoldEndedByArchive(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ta.parked(ch.ID)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	ta.wantEnded(ch.ID, true)
	r, code := ta.dialRawAgent("resumable-sessions").refusedAttach(ch.ID)
	if r.Code != "document-archived" || code != 4404 {
		t.Errorf("attach after archiving: %+v %d", r, code)
	}
}

// TestAgentHoldEndedByDelete: deleting the document ends the kept work for
// good before its rows go; attaching again is refused with
// document-unavailable (4404). A document is archived before it is deleted,
// which ends the hold already, so the test does what the delete's own hook
// does on the live document first, as handleChannelDelete does.
func TestAgentHoldEndedByDelete(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ta.parked(ch.ID)
	sc, err := ta.app.Store().Channel(context.Background(), ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	ta.app.Agent().DocumentDeleted(sc.ID)
	ta.wantEnded(ch.ID, true)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	apptest.Want(t, ta.Do("DELETE", "/api/channels/"+ch.ID, nil), 204, "")
	r, code := ta.dialRawAgent("resumable-sessions").refusedAttach(ch.ID)
	if r.Code != "document-unavailable" || code != 4404 {
		t.Errorf("attach after deleting: %+v %d", r, code)
	}
}

// TestAgentHoldEndedByReset: a Planner reset ends the kept work for good and
// the ownership at once; the client's next resume finds nothing.
func TestAgentHoldEndedByReset(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	session, _ := ta.parked(ch.ID)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/agent/reset", nil), 204, "")
	ta.wantEnded(ch.ID, true)
	ta.resumeFindsNothing(ch.ID, session)
}

// TestAgentHoldEndedByTokenRotation: rotating the agent token ends the kept
// work of a link attached with the old one; the old token is refused at the
// upgrade, and a resume with the new one finds nothing.
func TestAgentHoldEndedByTokenRotation(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	session, _ := ta.parked(ch.ID)
	old := ta.Token()
	if _, err := instance.RotateAgentToken(ta.app.Config().ConfigDir); err != nil {
		t.Fatal(err)
	}
	ta.wantEnded(ch.ID, true) // the watcher notices within a second
	if ta.Token() == old {
		t.Fatal("the token did not change")
	}
	ta.resumeFindsNothing(ch.ID, session)
}

// TestAgentStopUnansweredIsSentAfterResume: a Stop the client did not answer
// while attached is not confirmed in Chat, stays owed when the link drops,
// and is sent first after the next resume.
func TestAgentStopUnansweredIsSentAfterResume(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	// The Stop below waits this out unanswered; the turn's start waits for
	// started as long, so it must be long enough for a loaded machine to
	// answer in (at 100 ms the start timed out now and then, and the next
	// frame was not the turn).
	cfg.AgentAnswerTimeout = time.Second
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ra := ta.dialRawAgent("resumable-sessions")
	ra.attach(ch.ID)
	session, _ := ta.question(ra, ch.ID)
	ta.idle(ch.ID)

	var body struct {
		Results []struct{ Answered bool }
	}
	done := make(chan apptest.Response, 1)
	go func() { done <- ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil) }()
	if m := ra.next(); func() bool { s, ok := m.(wire.Stop); return !ok || s.Session != session || s.Run != "" }() {
		t.Fatalf("want the stop, got %#v", m)
	}
	r := <-done // not answered: it waits out the timeout
	apptest.Want(t, r, 200, "")
	r.JSON(t, &body)
	if len(body.Results) != 1 || body.Results[0].Answered {
		t.Fatalf("stop results %s", r.Body)
	}
	if lines := ta.chatLines(ch.ID); !reflect.DeepEqual(lines, []string{askedShipIt, "@ada" + plannerhost.MsgStopUnconfirmed}) {
		t.Errorf("chat lines %q", lines)
	}

	ra.drop()
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "disconnected" })
	if lines := ta.chatLines(ch.ID); len(lines) != 2 {
		t.Errorf("the drop said something: %q", lines)
	}
	back := ta.dialRawAgent("resumable-sessions")
	back.attach(ch.ID)
	back.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	wantResumed := wire.Resumed{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}}
	if got := back.next(); !reflect.DeepEqual(got, wantResumed) {
		t.Fatalf("got %#v, want %#v", got, wantResumed)
	}
	stop, ok := back.next().(wire.Stop)
	if !ok || stop.Session != session || stop.Run != "" {
		t.Fatalf("want the owed stop, got %#v", stop)
	}
	// Answered now, it is not sent again after another drop.
	back.send(wire.ControlResult{Request: stop.Request, OK: true})
	back.send(wire.Runs{Session: session, Active: []string{}, Paused: []string{"run1"},
		Cards: []wire.RunCard{{ID: "run1", Name: "Build", Status: "paused", Started: 1, Updated: 2, Stages: []wire.Stage{}}}})
	back.drop()
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "disconnected" })
	resumeOnly(t, ta, ch.ID, session, wantResumed)
}

// TestAgentStopChatLines: Chat says a Stop stopped the Planner only when the
// client confirmed it, that it was asked for while the machine is
// disconnected (held), and that a Resume could not reach a disconnected
// Planner; a Stop that withdrew the question a Planner only waited on says so.
func TestAgentStopChatLines(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	ra := ta.dialRawAgent("resumable-sessions")
	ra.attach(ch.ID)
	session, _ := ta.question(ra, ch.ID)
	ta.idle(ch.ID)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil), 200, "")
	}()
	stop := ra.next().(wire.Stop)
	ra.send(wire.ControlResult{Request: stop.Request, OK: true})
	wg.Wait()
	lines := []string{askedShipIt, "@ada stopped the Planner."}
	if got := ta.chatLines(ch.ID); !reflect.DeepEqual(got, lines) {
		t.Fatalf("after a confirmed stop %q", got)
	}

	ra.drop()
	ta.eventually(func() bool { return ta.plannerState(ch.ID) == "disconnected" })
	var held struct{ Held bool }
	r := ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &held)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/planner/resume", nil), 409, "planner-not-attached")
	lines = append(lines, "@ada"+plannerhost.MsgStopHeld, "@ada"+plannerhost.MsgResumeNotHeld)
	if got := ta.chatLines(ch.ID); !held.Held || !reflect.DeepEqual(got, lines) {
		t.Fatalf("held %v; chat lines %q", held.Held, got)
	}

	// The client resumes, its run ends: the session only waits on r1, and
	// a Stop withdraws it.
	back := ta.dialRawAgent("resumable-sessions")
	back.attach(ch.ID)
	back.send(wire.ResumeSessions{Sessions: []wire.ResumedSession{{Session: session, Requests: []string{"r1"}}}})
	back.next() // resumed
	owed := back.next().(wire.Stop)
	ended := int64(3)
	back.send(wire.ControlResult{Request: owed.Request, OK: true})
	back.send(wire.Runs{Session: session, Active: []string{}, Paused: []string{},
		Cards: []wire.RunCard{{ID: "run1", Name: "Build", Status: "stopped", Started: 1, Updated: 3, Ended: &ended, Stages: []wire.Stage{}}}})
	ta.eventually(func() bool {
		var st struct{ Runs []wire.RunCard }
		ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(ta.T, &st)
		return len(st.Runs) == 1 && st.Runs[0].Status == "stopped"
	})
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil), 200, "")
	if res, ok := back.next().(wire.InputResult); !ok || res.Request != "r1" || res.Status != "cancelled" {
		t.Fatalf("want r1 withdrawn, got %#v", res)
	}
	lines = append(lines, "@ada stopped the Planner."+plannerhost.MsgStopWithdrew)
	if got := ta.chatLines(ch.ID); !reflect.DeepEqual(got, lines) {
		t.Fatalf("after a stop that withdrew a question %q", got)
	}
	if got := ta.decisionStatuses(ch.ID); !reflect.DeepEqual(got, []string{"expired"}) {
		t.Errorf("decisions %v", got)
	}
}

// answerTurn reads the turn that gives the Planner an answer nobody waits
// on, checks it names the question, the answer and who chose it, and ends it.
func answerTurnOf(t *testing.T, ra *rawAgent) {
	t.Helper()
	start, ok := ra.next().(wire.Start)
	if !ok {
		t.Fatalf("want a start, got %#v", start)
	}
	ra.send(wire.Started{Session: start.Session})
	turn, ok := ra.next().(wire.Turn)
	if !ok {
		t.Fatalf("want the turn, got %#v", turn)
	}
	for _, s := range []string{"Question: Ship it?", "Answer: yes", "Chosen by @ada."} {
		if !strings.Contains(turn.Prompt, s) {
			t.Errorf("the turn's prompt lacks %q:\n%s", s, turn.Prompt)
		}
	}
	ra.send(wire.TurnEnd{Session: start.Session, Turn: turn.Turn, Status: "finished"})
}

// TestAgentUnawaitedAnswerAfterRestart: a client without resumable-sessions
// asked a question; the server restarted, which withdraws nothing, so its
// Decision stays open and nobody waits on it. Its answer reaches the next
// Planner that attaches, once, as a turn of its own.
func TestAgentUnawaitedAnswerAfterRestart(t *testing.T) {
	ta2, ch, _, decision := questionAcrossRestart(t, testConfig(t, t.TempDir()), "")
	apptest.Want(t, ta2.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+decision+"/answer", map[string]any{"yes": true}), 200, "")
	back := ta2.dialRawAgent("")
	back.attach(ch.ID)
	answerTurnOf(t, back)
	ta2.eventually(func() bool {
		return plannerhost.PendingAnswers(ta2.app.Planner(), ch.ID) == 0
	})
}

// TestAgentUndeliveredAnswerReachesPlanner: an answer given while a
// resumable link was away, whose client comes back with nothing to resume or
// resumes without the session, reaches the Planner as a turn of its own.
func TestAgentUndeliveredAnswerReachesPlanner(t *testing.T) {
	for name, first := range map[string]wire.Message{
		"nothing to resume": wire.Runs{Session: "s-other", Active: []string{}, Paused: []string{}, Cards: []wire.RunCard{}},
		"resume without it": wire.ResumeSessions{Sessions: []wire.ResumedSession{}},
	} {
		t.Run(name, func(t *testing.T) {
			ta := startApp(t)
			ta.AddRepository("octo/plans")
			ch := ta.CreateDocument("octo/plans", "Plan")
			_, decision := ta.parked(ch.ID)
			apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+decision+"/answer", map[string]any{"yes": true}), 200, "")

			fresh := ta.dialRawAgent("resumable-sessions")
			fresh.attach(ch.ID)
			fresh.send(first)
			if _, ok := first.(wire.ResumeSessions); ok {
				if got := fresh.next(); !reflect.DeepEqual(got, wire.Resumed{Sessions: []wire.ResumedSession{}}) {
					t.Fatalf("resumed %#v", got)
				}
			}
			answerTurnOf(t, fresh)
			if got := ta.decisionStatuses(ch.ID); !reflect.DeepEqual(got, []string{"decided"}) {
				t.Errorf("decisions %v", got)
			}
		})
	}
}

// TestAgentUndeliveredAnswerAfterRestart: an answer a dropped resumable
// link held is stored with its hold; after a restart, the client attaches
// with nothing to resume and the answer reaches the Planner as a turn.
func TestAgentUndeliveredAnswerAfterRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Plan")
	_, decision := ta.parked(ch.ID)
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+decision+"/answer", map[string]any{"yes": true}), 200, "")
	ta.eventually(func() bool { // the hold stores the answer
		holds, err := ta.app.Store().LinkHolds(context.Background())
		return err == nil && len(holds) == 1 && strings.Contains(string(holds[0].Body), `"answers":[{"request":"r1"`)
	})
	ta.Stop()

	ta2 := startAppWith(t, cfg)
	fresh := ta2.dialRawAgent("resumable-sessions")
	fresh.attach(ch.ID)
	fresh.send(wire.Runs{Session: "s-other", Active: []string{}, Paused: []string{}, Cards: []wire.RunCard{}})
	answerTurnOf(t, fresh)
}
