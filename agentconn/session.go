package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// session is one Planner session on a link: opened by start for a turn, and
// kept after the turn while it has live runs, open questions or a held
// answer; destroyed once it has none.
type session struct {
	id         string
	mode       string
	started    bool
	startTimer *time.Timer
	turn       *turn          // the turn being started or running; nil once it ended
	from       *wire.ForkFrom // session-forks: opened with fork from here (fork.go)

	active, paused []string
	cards          map[string]*wire.RunCard // merged with RunCard.Apply
	runOrder       []string
	questions      map[string]*Question
}

// live reports whether the session's last report has live or paused runs.
func (s *session) live() bool {
	if len(s.active) > 0 || len(s.paused) > 0 {
		return true
	}
	for _, c := range s.cards {
		if c.Live() {
			return true
		}
	}
	return false
}

func (s *session) hasRun(run string) bool {
	_, ok := s.cards[run]
	return ok || contains(s.active, run) || contains(s.paused, run)
}

// plannerTurn is the session's turn when it is a Planner turn, which is
// what a person's message waits for or steers into: an isolated session's
// turn is a background job's and never counts.
func (s *session) plannerTurn() *turn {
	if s.mode == wire.ModeIsolated {
		return nil
	}
	return s.turn
}

// turn is one turn of a session.
type turn struct {
	id      string
	sess    *session
	req     TurnRequest
	ctx     context.Context // ends with the turn: its host tools stop
	cancel  context.CancelFunc
	running bool // the turn message was sent
	aborted bool
	ended   bool

	hostTools  map[string]bool
	ownTools   map[string]bool
	callIDs    map[string]bool // every toolCallId used, host or own
	ownCalls   map[string]*ownCall
	abortTimer *time.Timer

	// deliver serialises calls to the sink and keeps End last.
	deliver      sync.Mutex
	endDelivered bool
}

type ownCall struct {
	name    string
	input   json.RawMessage
	started time.Time
	final   bool
}

// emit calls the sink unless End was already delivered.
func (t *turn) emit(f func(TurnSink), end bool) {
	t.deliver.Lock()
	defer t.deliver.Unlock()
	if t.endDelivered {
		return
	}
	t.endDelivered = end
	f(t.req.Sink)
}

// startTurn opens a session and, once the client has started it, sends the turn.
func (l *link) startTurn(req TurnRequest) error {
	_, err := l.openTurn(req)
	return err
}

// openTurn is startTurn, returning the turn.
func (l *link) openTurn(req TurnRequest) (*turn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != stateAttached {
		return nil, ErrNotAttached
	}
	mode := req.Mode
	if mode == "" {
		mode = wire.ModePlanner
	}
	if mode == wire.ModePlanner && l.ending > 0 {
		return nil, &TurnRefused{Code: CodePlannerBusy, Message: wire.MsgBusy}
	}
	// A background job's isolated session never holds up a person's turn,
	// nor the other way round: each mode is busy with its own turn only.
	for _, s := range l.sessions {
		if s.turn != nil && s.mode == mode {
			return nil, &TurnRefused{Code: CodePlannerBusy, Message: wire.MsgBusy}
		}
	}
	sess := &session{id: newID("s-"), mode: mode, cards: map[string]*wire.RunCard{}, questions: map[string]*Question{}}
	ctx, cancel := context.WithCancel(l.ctx)
	t := &turn{id: newID("t-"), sess: sess, req: req, ctx: ctx, cancel: cancel,
		hostTools: map[string]bool{}, ownTools: map[string]bool{}, callIDs: map[string]bool{}, ownCalls: map[string]*ownCall{}}
	for _, tool := range req.Tools {
		t.hostTools[tool.Name] = true
	}
	sess.turn = t
	l.sessions[sess.id] = sess
	sess.startTimer = time.AfterFunc(l.srv.opts.AnswerTimeout, func() { l.startTimedOut(sess) })
	l.log.Info("turn requested", "session", sess.id, "turn", t.id)
	l.openSessionLocked(sess, t) // start or fork (fork.go)
	return t, nil
}

func (l *link) started(m wire.Started) {
	l.mu.Lock()
	sess := l.sessions[m.Session]
	if sess == nil || sess.started {
		l.mu.Unlock()
		return // a session that has ended: ignored
	}
	sess.started = true
	sess.startTimer.Stop()
	t := sess.turn
	l.mu.Unlock()
	if t == nil {
		return
	}
	// The spec checks access again before every turn; a loss closes the link,
	// which fails this turn.
	if !l.recheck(l.ctx) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.ended || t.aborted {
		return
	}
	t.running = true
	l.send(l.featureTurn(forkTurn(sess, &t.req, t.req.message(sess.id, t.id))))
}

func (l *link) startFailed(m wire.StartFailed) {
	var fx effects
	l.mu.Lock()
	if sess := l.sessions[m.Session]; sess != nil && !sess.started && !l.forkRefusedLocked(sess, m.Message, &fx) {
		sess.startTimer.Stop()
		l.log.Info("start failed", "session", sess.id, "err", m.Message)
		l.endSessionLocked(sess, wire.MsgStartFailed(m.Message), true, &fx)
	}
	l.mu.Unlock()
	fx.run(l)
}

func (l *link) startTimedOut(sess *session) {
	var fx effects
	l.mu.Lock()
	if l.sessions[sess.id] == sess && !sess.started {
		l.log.Info("start not answered", "session", sess.id)
		l.endSessionLocked(sess, wire.MsgStartTimeout, true, &fx)
	}
	l.mu.Unlock()
	fx.run(l)
}

// liveTurn returns the session and its turn when turnID is its running turn.
func (l *link) liveTurn(sessionID, turnID string) (*session, *turn) {
	sess := l.sessions[sessionID]
	if sess == nil {
		return nil, nil
	}
	if t := sess.turn; t != nil && t.id == turnID && t.running && !t.ended && !t.aborted {
		return sess, t
	}
	return sess, nil
}

func (l *link) declareTools(m wire.Tools) {
	var fx effects
	l.mu.Lock()
	defer func() { l.mu.Unlock(); fx.run(l) }()
	_, t := l.liveTurn(m.Session, m.Turn)
	if t == nil {
		return
	}
	if t.sess.mode == wire.ModeIsolated && len(m.Names) > 0 {
		l.failTurnLocked(t, wire.MsgIsolatedTools, &fx)
		return
	}
	if len(t.ownTools)+len(m.Names) > wire.MaxTools {
		l.failTurnLocked(t, wire.MsgToolBoundary("more than 256 tools were declared."), &fx)
		return
	}
	for _, n := range m.Names {
		if t.hostTools[n] {
			l.failTurnLocked(t, wire.MsgHostToolName(n), &fx)
			return
		}
		t.ownTools[n] = true
	}
}

func (l *link) part(m wire.Part) {
	p := m.Part
	switch p.Type {
	case wire.PartToolCall, wire.PartToolResult, wire.PartError:
		l.turnPart(m)
		return
	}
	// Any other part only streams, changing nothing the link keeps. This is
	// the path of every text delta, so it collects no effects.
	l.mu.Lock()
	_, t := l.liveTurn(m.Session, m.Turn)
	l.mu.Unlock()
	if t != nil {
		t.emit(func(s TurnSink) { s.Part(p) }, false)
	}
}

// turnPart handles a part that changes the turn: a call or result of the
// client's own tools, or its error.
func (l *link) turnPart(m wire.Part) {
	var fx effects
	l.mu.Lock()
	defer func() { l.mu.Unlock(); fx.run(l) }()
	_, t := l.liveTurn(m.Session, m.Turn)
	if t == nil {
		return
	}
	p := m.Part
	emitPart := func() { fx.add(func() { t.emit(func(s TurnSink) { s.Part(p) }, false) }) }
	switch p.Type {
	case wire.PartToolCall:
		if t.callIDs[p.ToolCallID] {
			l.failTurnLocked(t, wire.MsgRepeatedCall(p.ToolCallID), &fx)
			return
		}
		if !t.ownTools[p.ToolName] {
			l.failTurnLocked(t, wire.MsgToolBoundary(p.ToolName+" was called as the Planner's own tool, but the turn did not declare it."), &fx)
			return
		}
		t.callIDs[p.ToolCallID] = true
		input := toolInput(p.Input)
		t.ownCalls[p.ToolCallID] = &ownCall{name: p.ToolName, input: input, started: time.Now()}
		emitPart()
		ev := ToolCallEvent{ToolCallID: p.ToolCallID, Name: p.ToolName, Status: ToolRunning, Input: input}
		fx.add(func() { t.emit(func(s TurnSink) { s.ToolCall(ev) }, false) })
	case wire.PartToolResult:
		c := t.ownCalls[p.ToolCallID]
		if c == nil || c.final || c.name != p.ToolName {
			l.failTurnLocked(t, wire.MsgToolBoundary("a tool-result for "+p.ToolCallID+" did not follow its own tool-call."), &fx)
			return
		}
		emitPart()
		if p.Preliminary {
			return
		}
		c.final = true
		ev := ToolCallEvent{ToolCallID: p.ToolCallID, Name: p.ToolName, Status: ToolDone, Input: c.input,
			Result: p.Result, Duration: time.Since(c.started)}
		if p.IsError {
			ev.Status = ToolFailed
			ev.Error, _ = wire.ParseToolError(p.Result)
		}
		fx.add(func() { t.emit(func(s TurnSink) { s.ToolCall(ev) }, false) })
	case wire.PartError:
		emitPart()
		// The client's own error fails the turn; it knows, so no abort.
		l.endTurnLocked(t, TurnOutcome{Status: "failed", Message: p.Error}, &fx)
	}
}

// toolInput is a tool call's input as JSON, or as a JSON string when the
// client's text is not JSON, so a row can always show it.
func toolInput(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := wire.Marshal(s)
	return b
}

func (l *link) turnEnd(m wire.TurnEnd) {
	var fx effects
	l.mu.Lock()
	sess := l.sessions[m.Session]
	if sess != nil && sess.turn != nil && sess.turn.id == m.Turn && sess.turn.running {
		// An aborted turn's turn-end is what the abort waits for.
		l.endTurnLocked(sess.turn, TurnOutcome{Status: m.Status, Message: m.Message}, &fx)
	}
	l.mu.Unlock()
	fx.run(l)
}

// failTurnLocked fails a turn the server gave up on: the client is told to
// stop with abort, and Chat gets the failure.
func (l *link) failTurnLocked(t *turn, message string, fx *effects) {
	if t.running && !t.aborted {
		l.send(wire.Abort{Session: t.sess.id, Turn: t.id})
	}
	l.log.Info("turn failed", "session", t.sess.id, "turn", t.id, "err", message)
	l.endTurnLocked(t, TurnOutcome{Status: "failed", Message: message}, fx)
}

// endTurnLocked ends t once: its host tools stop, the sink gets End, and the
// session is destroyed unless something keeps it.
func (l *link) endTurnLocked(t *turn, o TurnOutcome, fx *effects) {
	if t.ended {
		return
	}
	t.ended = true
	t.cancel()
	if t.abortTimer != nil {
		t.abortTimer.Stop()
	}
	if t.sess.turn == t {
		t.sess.turn = nil
	}
	l.log.Info("turn ended", "session", t.sess.id, "turn", t.id, "status", o.Status)
	l.recordForkLocked(t, o)
	// The Planner counts as busy until the sink has taken End (Chat's reply
	// is saved as it ended): until then nobody reads the document as idle,
	// and no new turn starts beside a reply that is not final.
	// End runs on a goroutine of its own, so the sink may finish the reply
	// (its images included) before it returns.
	// An isolated session's job is not the Planner's reply: it never makes
	// the Planner busy.
	counted := t.sess.mode != wire.ModeIsolated
	if counted {
		if l.ending == 0 {
			l.endsTaken = make(chan struct{})
		}
		l.ending++
	}
	fx.add(func() {
		go func() {
			t.emit(func(s TurnSink) { s.End(o) }, true)
			if counted {
				l.mu.Lock()
				if l.ending--; l.ending == 0 {
					close(l.endsTaken)
				}
				l.mu.Unlock()
			}
			if s, ok := t.req.Sink.(IdleSink); ok {
				s.Idle()
			}
		}()
	})
	l.settleLocked(t.sess, fx)
}

// abortTurnLocked stops t: the client is sent abort and has AnswerTimeout to
// end it before the server ends it anyway. A turn still being started is
// ended at once.
func (l *link) abortTurnLocked(t *turn, fx *effects) {
	if t.ended || t.aborted {
		return
	}
	if !t.running {
		l.endSessionLocked(t.sess, "", true, fx)
		return
	}
	t.aborted = true
	t.cancel() // no host-tool-result is sent after abort
	l.send(wire.Abort{Session: t.sess.id, Turn: t.id})
	t.abortTimer = time.AfterFunc(l.srv.opts.AnswerTimeout, func() {
		var fx effects
		l.mu.Lock()
		l.endTurnLocked(t, TurnOutcome{Status: "aborted", Message: wire.MsgAbortTimeout}, &fx)
		l.mu.Unlock()
		fx.run(l)
	})
}

// settleLocked destroys the session once it has no turn, no live runs, no
// open question and no held answer.
func (l *link) settleLocked(sess *session, fx *effects) {
	if l.sessions[sess.id] != sess || sess.turn != nil || len(sess.questions) > 0 || sess.live() || l.awaitsReceiptLocked(sess) {
		return
	}
	delete(l.sessions, sess.id)
	l.send(wire.Destroy{Session: sess.id})
}

// endSessionLocked ends a session whatever it holds: at close (nothing can be
// sent), or when it failed to start (destroy is sent). Its turn fails (or is
// aborted when message is empty), its questions are withdrawn and its live
// runs show as stopped.
func (l *link) endSessionLocked(sess *session, message string, destroy bool, fx *effects) {
	delete(l.sessions, sess.id)
	if sess.startTimer != nil {
		sess.startTimer.Stop()
	}
	if t := sess.turn; t != nil {
		o := TurnOutcome{Status: "failed", Message: message}
		if message == "" {
			o = TurnOutcome{Status: "aborted"}
		}
		t.ended = true
		t.cancel()
		if t.abortTimer != nil {
			t.abortTimer.Stop()
		}
		sess.turn = nil
		fx.add(func() { t.emit(func(s TurnSink) { s.End(o) }, true) })
	}
	for _, q := range sess.questions {
		l.withdrawLocked(q, fx)
	}
	if report, ok := l.stoppedRunsLocked(sess); ok {
		fx.add(func() { l.srv.host.Runs(report.Document, report) })
	}
	if destroy {
		l.send(wire.Destroy{Session: sess.id})
	}
}

// runHostTool runs one host tool call and answers it, unless the turn ended
// or was aborted meanwhile.
func (l *link) runHostTool(t *turn, call ToolCall, input json.RawMessage) {
	start := time.Now()
	out, err := l.srv.host.CallTool(t.ctx, call)
	ev := ToolCallEvent{ToolCallID: call.ToolCallID, Name: call.Name, Host: true, Status: ToolDone,
		Input: input, Duration: time.Since(start)}
	res := wire.HostToolResult{Session: call.Session, Turn: call.Turn, ToolCallID: call.ToolCallID, Output: out}
	if err == nil && !json.Valid(out) {
		err = errors.New("the host tool returned invalid JSON")
	}
	if err != nil {
		te := l.toolError(call, err)
		res = hostToolError(call, te.Message)
		ev.Status, ev.Error = ToolFailed, te
		ev.Result, _ = te.Envelope()
	} else {
		ev.Result = out
		if frame, _ := wire.Encode(res); len(frame) > wire.MaxFrameBytes {
			te := &wire.ToolError{Code: "result-too-large", Message: wire.MsgResultTooLarge(call.Name)}
			res = hostToolError(call, te.Message)
			ev.Status, ev.Error, ev.Result = ToolFailed, te, nil
		}
	}
	l.mu.Lock()
	l.hostCalls--
	live := !t.ended && !t.aborted && l.state == stateAttached
	if live {
		l.send(res)
	}
	l.mu.Unlock()
	if live {
		t.emit(func(s TurnSink) { s.ToolCall(ev) }, false)
	}
}

// toolError is the structured error a failed host call shows: the room's own
// *ToolError, or a generic one whose detail goes only to the log.
func (l *link) toolError(call ToolCall, err error) *wire.ToolError {
	var te *wire.ToolError
	if errors.As(err, &te) {
		return te
	}
	l.log.Warn("host tool failed", "session", call.Session, "turn", call.Turn, "tool", call.Name, "err", err)
	return &wire.ToolError{Code: "host-tool-failed", Message: wire.MsgHostToolFailed}
}

func hostToolError(call ToolCall, message string) wire.HostToolResult {
	out, _ := wire.Marshal(map[string]string{"error": message})
	return wire.HostToolResult{Session: call.Session, Turn: call.Turn, ToolCallID: call.ToolCallID, Output: out, IsError: true}
}

func (l *link) hostToolCall(m wire.HostToolCall) {
	var fx effects
	l.mu.Lock()
	defer func() { l.mu.Unlock(); fx.run(l) }()
	call := ToolCall{Document: l.doc.ID, Session: m.Session, Turn: m.Turn, ToolCallID: m.ToolCallID, Name: m.ToolName}
	sess, t := l.liveTurn(m.Session, m.Turn)
	switch {
	case sess == nil:
		l.send(hostToolError(call, wire.MsgSessionEnded))
		return
	case t == nil:
		if cur := sess.turn; cur == nil || cur.id != m.Turn || !cur.aborted {
			l.send(hostToolError(call, wire.MsgTurnEnded))
		}
		return
	case t.callIDs[m.ToolCallID]:
		l.failTurnLocked(t, wire.MsgRepeatedCall(m.ToolCallID), &fx)
		return
	}
	t.callIDs[m.ToolCallID] = true
	input := toolInput(m.Input)
	fail := func(te *wire.ToolError) {
		l.send(hostToolError(call, te.Message))
		result, _ := te.Envelope()
		ev := ToolCallEvent{ToolCallID: m.ToolCallID, Name: m.ToolName, Host: true, Status: ToolFailed, Input: input, Result: result, Error: te}
		fx.add(func() { t.emit(func(s TurnSink) { s.ToolCall(ev) }, false) })
	}
	if !t.hostTools[m.ToolName] {
		fail(&wire.ToolError{Code: "unknown-tool", Message: wire.MsgNotATool(m.ToolName)})
		return
	}
	if !json.Valid([]byte(m.Input)) {
		fail(&wire.ToolError{Code: "invalid-input", Message: wire.MsgBadToolInput(m.ToolName)})
		return
	}
	if l.hostCalls >= maxHostCallsAtOnce {
		fail(&wire.ToolError{Code: "too-many-calls", Message: wire.MsgTooManyHostCalls(m.ToolName, maxHostCallsAtOnce)})
		return
	}
	l.hostCalls++
	call.Input = json.RawMessage(m.Input)
	ev := ToolCallEvent{ToolCallID: m.ToolCallID, Name: m.ToolName, Host: true, Status: ToolRunning, Input: input}
	fx.add(func() {
		t.emit(func(s TurnSink) { s.ToolCall(ev) }, false)
		go l.runHostTool(t, call, input)
	})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
