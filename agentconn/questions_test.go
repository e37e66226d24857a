package agentconn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// questionLink is a raw attached link with a running turn, to ask from.
type questionLink struct {
	t       *testing.T
	h       *harness
	c       *websocket.Conn
	sink    *sink
	session string
	turn    string
}

func newQuestionLink(t *testing.T, configure ...func(*agentconn.Options)) *questionLink {
	h := newHarness(t, configure...)
	c := h.rawAttached(t)
	s := newSink()
	session, turn := startRawTurn(t, h, c, s)
	return &questionLink{t: t, h: h, c: c, sink: s, session: session, turn: turn}
}

func (q *questionLink) ask(request, input string, extra ...string) {
	q.t.Helper()
	writeJSON(q.t, q.c, `{"type":"input-request","request":"`+request+`","session":"`+q.session+`"`+strings.Join(extra, "")+`,"input":`+input+`}`)
}

func (q *questionLink) expect(want string) {
	q.t.Helper()
	if got := readFrame(q.t, q.c); got != want {
		q.t.Errorf("got  %s\nwant %s", got, want)
	}
}

// sync sends a message whose answer is known, so that the next frame proves
// nothing else was sent before it.
func (q *questionLink) sync() {
	q.t.Helper()
	writeJSON(q.t, q.c, `{"type":"host-tool-call","session":"sync","turn":"t","toolCallId":"c","toolName":"x","input":"{}"}`)
	q.expect(`{"type":"host-tool-result","session":"sync","turn":"t","toolCallId":"c","output":{"error":"The session has ended."},"isError":true}`)
}

const questionnaire = `{"method":"questionnaire","params":{"questions":[` +
	`{"question":"Storage?","header":"Store","options":[{"label":"SQLite","description":"One file","preview":"pv"},{"label":"Postgres","description":""}]},` +
	`{"question":"Rollout?","header":"Rollout","options":[{"label":"Pilot","description":""},{"label":"All","description":""}],"multiSelect":true}]}}`

func str(s string) *string { return &s }

func TestQuestionMethods(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		answer wire.Answer
		want   string // the input-result after "request":"r1",
	}{
		{"questionnaire answered", questionnaire, wire.Answer{Status: "answered", Answers: []wire.QuestionAnswer{
			{QuestionIndex: 0, Kind: "option", Answer: str("SQLite"), Preview: "pv"},
			{QuestionIndex: 1, Kind: "multi", Selected: []string{"Pilot", "All"}}}},
			`"status":"answered","value":{"answers":[{"questionIndex":0,"question":"Storage?","kind":"option","answer":"SQLite","preview":"pv"},{"questionIndex":1,"question":"Rollout?","kind":"multi","answer":null,"selected":["Pilot","All"]}],"cancelled":false}}`},
		{"questionnaire written answers", questionnaire, wire.Answer{Status: "answered", Answers: []wire.QuestionAnswer{
			{QuestionIndex: 0, Kind: "chat", Answer: str("Whatever is simplest")},
			{QuestionIndex: 1, Kind: "chat", Answer: str("Pilot first")}}},
			`"status":"answered","value":{"answers":[{"questionIndex":0,"question":"Storage?","kind":"chat","answer":"Whatever is simplest"},{"questionIndex":1,"question":"Rollout?","kind":"chat","answer":"Pilot first"}],"cancelled":false}}`},
		{"questionnaire one cancelled after another answered", questionnaire, wire.Answer{Status: "cancelled", Answers: []wire.QuestionAnswer{
			{QuestionIndex: 0, Kind: "custom", Answer: str("DuckDB")}}},
			`"status":"cancelled","value":{"answers":[{"questionIndex":0,"question":"Storage?","kind":"custom","answer":"DuckDB"}],"cancelled":true}}`},
		{"questionnaire cancelled", questionnaire, wire.Answer{Status: "cancelled"},
			`"status":"cancelled","value":{"answers":[],"cancelled":true}}`},
		{"confirm yes", `{"method":"confirm","title":"Ship?","message":"It is ready."}`, wire.Answer{Status: "answered", Yes: true},
			`"status":"answered","value":true}`},
		{"confirm no", `{"method":"confirm","title":"Ship?","message":""}`, wire.Answer{Status: "answered"},
			`"status":"answered","value":false}`},
		{"confirm cancelled", `{"method":"confirm","title":"Ship?","message":""}`, wire.Answer{Status: "cancelled"},
			`"status":"cancelled","value":false}`},
		{"select", `{"method":"select","title":"Pick","choices":["a","b"]}`, wire.Answer{Status: "answered", Choice: str("b")},
			`"status":"answered","value":"b"}`},
		{"select written", `{"method":"select","title":"Pick","choices":["a","b"]}`, wire.Answer{Status: "answered"},
			`"status":"answered","value":null}`},
		{"select cancelled", `{"method":"select","title":"Pick","choices":[]}`, wire.Answer{Status: "cancelled"},
			`"status":"cancelled","value":null}`},
		{"input", `{"method":"input","title":"Name","placeholder":"e.g. ana"}`, wire.Answer{Status: "answered", Text: "bo"},
			`"status":"answered","value":"bo"}`},
		{"input cancelled", `{"method":"input","title":"Name"}`, wire.Answer{Status: "cancelled"},
			`"status":"cancelled","value":null}`},
		{"editor", `{"method":"editor","title":"Edit","initial":"x"}`, wire.Answer{Status: "answered", Text: "# New\n"},
			`"status":"answered","value":"# New\n"}`},
		{"failed", `{"method":"editor","title":"Edit"}`, wire.Answer{Status: "failed", Message: "The document was archived."},
			`"status":"failed","message":"The document was archived."}`},
	}
	q := newQuestionLink(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q.t = t
			req := fmt.Sprintf("r%d", i)
			q.ask(req, tt.input)
			asked := recv(t, q.h.host.asked)
			if asked.Request != req || asked.Session != q.session || asked.Document != "doc1" {
				t.Errorf("asked = %+v", asked)
			}
			if err := asked.Answer(tt.answer); err != nil {
				t.Fatal(err)
			}
			q.expect(`{"type":"input-result","request":"` + req + `",` + tt.want)
			if err := asked.Answer(tt.answer); !errors.Is(err, agentconn.ErrQuestionClosed) {
				t.Errorf("a second answer: %v", err)
			}
		})
	}
}

func TestQuestionLifecycle(t *testing.T) {
	const confirm = `{"method":"confirm","title":"Ship?","message":""}`
	t.Run("input-cancel withdraws", func(t *testing.T) {
		q := newQuestionLink(t)
		q.ask("r1", confirm, `,"block":{"index":2,"digest":"sha256:`+strings.Repeat("0", 64)+`"}`)
		asked := recv(t, q.h.host.asked)
		if asked.Block == nil || asked.Block.Index != 2 {
			t.Errorf("block = %+v", asked.Block)
		}
		writeJSON(t, q.c, `{"type":"input-cancel","request":"r1"}`)
		q.expect(`{"type":"input-result","request":"r1","status":"cancelled","value":false}`)
		if w := recv(t, q.h.host.withdrawn); w != asked {
			t.Errorf("withdrew %+v", w)
		}
		if err := asked.Answer(wire.Answer{Status: "answered", Yes: true}); !errors.Is(err, agentconn.ErrQuestionClosed) {
			t.Errorf("answer after cancel: %v", err)
		}
	})
	t.Run("Ask fails", func(t *testing.T) {
		q := newQuestionLink(t)
		q.h.host.set(func(f *fakeHost) {
			f.askErr = &wire.ToolError{Code: "too-many-cards", Message: "The document has too many open decisions."}
		})
		q.ask("r1", confirm)
		q.expect(`{"type":"input-result","request":"r1","status":"failed","message":"The document has too many open decisions."}`)
		q.h.host.set(func(f *fakeHost) { f.askErr = errors.New("disk full") })
		q.ask("r2", confirm)
		q.expect(`{"type":"input-result","request":"r2","status":"failed","message":"Chopin could not turn this question into Decisions."}`)
	})
	t.Run("a 17th open request fails", func(t *testing.T) {
		q := newQuestionLink(t)
		for i := range 16 {
			q.ask(fmt.Sprintf("r%d", i), confirm)
			recv(t, q.h.host.asked)
		}
		q.ask("r16", confirm)
		q.expect(`{"type":"input-result","request":"r16","status":"failed","message":"16 questions are already open on this connection. Wait for an answer, or cancel one, before asking another."}`)
	})
	t.Run("an ended session's question is cancelled", func(t *testing.T) {
		q := newQuestionLink(t)
		writeJSON(t, q.c, `{"type":"input-request","request":"r1","session":"gone","input":{"method":"select","title":"t","choices":[]}}`)
		q.expect(`{"type":"input-result","request":"r1","status":"cancelled","value":null}`)
	})
	for _, repeat := range []struct{ name, first string }{
		{"a repeated open request id", ""},
		{"a repeated answered request id", "answer"},
	} {
		t.Run(repeat.name, func(t *testing.T) {
			q := newQuestionLink(t)
			q.ask("r1", confirm)
			asked := recv(t, q.h.host.asked)
			if repeat.first == "answer" {
				must(t, asked.Answer(wire.Answer{Status: "answered"}))
				q.expect(`{"type":"input-result","request":"r1","status":"answered","value":false}`)
			}
			q.ask("r1", confirm)
			expectClose(t, q.c, `{"type":"error","code":"protocol","message":"The request id r1 was already used on this connection. Use a fresh id, such as a UUID, for every input-request."}`, 1008, "protocol")
		})
	}
	t.Run("a paused root run holds the answer", func(t *testing.T) {
		q := newQuestionLink(t)
		runs := func(paused string) {
			writeJSON(t, q.c, `{"type":"runs","session":"`+q.session+`","active":["root"],"paused":[`+paused+`],"cards":[{"id":"root","name":"Build","status":"running","started":1,"updated":2,"stages":[],"waiting":1}]}`)
			recv(t, q.h.host.runs)
		}
		runs(`"root"`)
		q.ask("r1", confirm, `,"workflowRunId":"child","rootRunId":"root"`)
		asked := recv(t, q.h.host.asked)
		must(t, asked.Answer(wire.Answer{Status: "answered", Yes: true}))
		q.sync() // nothing was sent: the run is paused
		runs(``)
		q.expect(`{"type":"input-result","request":"r1","status":"answered","value":true}`)
	})
	t.Run("an open question keeps the session after its turn", func(t *testing.T) {
		q := newQuestionLink(t)
		q.ask("r1", confirm)
		asked := recv(t, q.h.host.asked)
		writeJSON(t, q.c, `{"type":"turn-end","session":"`+q.session+`","turn":"`+q.turn+`","status":"finished"}`)
		if _, o := q.sink.until(t); o.Status != "finished" {
			t.Fatalf("outcome %+v", o)
		}
		q.sync() // no destroy yet
		must(t, asked.Answer(wire.Answer{Status: "answered", Yes: true}))
		q.expect(`{"type":"input-result","request":"r1","status":"answered","value":true}`)
		q.expect(`{"type":"destroy","session":"` + q.session + `"}`)
	})
	t.Run("the link closing withdraws open questions", func(t *testing.T) {
		q := newQuestionLink(t)
		q.ask("r1", confirm)
		asked := recv(t, q.h.host.asked)
		_ = q.c.Close()
		if w := recv(t, q.h.host.withdrawn); w != asked {
			t.Errorf("withdrew %+v", w)
		}
		if err := asked.Answer(wire.Answer{Status: "answered"}); !errors.Is(err, agentconn.ErrQuestionClosed) {
			t.Errorf("answer after close: %v", err)
		}
	})
	t.Run("an isolated session gets no Decisions", func(t *testing.T) {
		h := newHarness(t)
		c := h.rawAttached(t)
		must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Mode: "isolated", Prompt: "p", Sink: newSink()}))
		var start wire.Start
		decodeServer(t, readFrame(t, c), &start)
		writeJSON(t, c, `{"type":"input-request","request":"r1","session":"`+start.Session+`","input":`+confirm+`}`)
		if got := readFrame(t, c); got != `{"type":"input-result","request":"r1","status":"failed","message":"An isolated session gets no Decisions."}` {
			t.Errorf("got %s", got)
		}
	})
}

// TestClientAsk drives a question through the Go client.
func TestClientAsk(t *testing.T) {
	h := newHarness(t)
	results := make(chan client.Result, 2)
	h.dial(t, client.Config{Handler: client.Handler{Turn: func(ctx context.Context, tr *client.Turn) error {
		r, err := tr.Session.Ask(ctx, wire.Input{Method: "select", Title: "Pick", Choices: []string{"a", "b"}}, client.AskOptions{})
		if err != nil {
			return err
		}
		results <- r
		r, err = tr.Session.Ask(ctx, wire.Input{Method: "input", Title: "Name"}, client.AskOptions{})
		results <- r
		return err
	}}})
	s := newSink()
	must(t, h.srv.StartTurn(context.Background(), "doc1", agentconn.TurnRequest{Prompt: "p", Sink: s}))
	must(t, recv(t, h.host.asked).Answer(wire.Answer{Status: "answered", Choice: str("b")}))
	if r := recv(t, results); r.Status != "answered" || r.Choice == nil || *r.Choice != "b" {
		t.Errorf("select = %+v", r)
	}
	must(t, recv(t, h.host.asked).Answer(wire.Answer{Status: "answered", Text: "ana"}))
	if r := recv(t, results); r.Status != "answered" || r.Text == nil || *r.Text != "ana" {
		t.Errorf("input = %+v", r)
	}
	if _, o := s.until(t); o.Status != "finished" {
		t.Errorf("outcome %+v", o)
	}
}

// TestStopWithdrawsWaitingQuestion: Stop Planner on a session that has no
// run to pause and only waits on a question withdraws the question, says so
// in the outcome, and the session ends.
func TestStopWithdrawsWaitingQuestion(t *testing.T) {
	q := newQuestionLink(t)
	q.ask("r1", `{"method":"confirm","title":"Ship?","message":""}`)
	asked := recv(t, q.h.host.asked)
	writeJSON(t, q.c, `{"type":"turn-end","session":"`+q.session+`","turn":"`+q.turn+`","status":"finished"}`)
	q.sink.until(t)
	q.sync() // the open question keeps the session: no destroy yet

	out, err := q.h.srv.Stop(context.Background(), "doc1", "")
	must(t, err)
	if out.Aborted || len(out.Results) != 0 || fmt.Sprint(out.Withdrawn) != "[r1]" {
		t.Errorf("outcome = %+v, want r1 withdrawn and no stop sent", out)
	}
	q.expect(`{"type":"input-result","request":"r1","status":"cancelled","value":false}`)
	q.expect(`{"type":"destroy","session":"` + q.session + `"}`)
	if w := recv(t, q.h.host.withdrawn); w != asked {
		t.Errorf("withdrew %+v", w)
	}
}
