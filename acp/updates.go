package acp

// A running turn's stream: the agent's session updates as stream parts.
// agent_message_chunk is text, agent_thought_chunk reasoning, the agent's
// own tool_call and tool_call_update the bridge's own tool parts (one
// generic own tool per ACP tool kind, the ACP title shown with the input),
// except the calls of the bridge's own MCP server, whose host tool rows
// Chopin already shows. An isolated session's turn streams only text and
// reasoning: it may declare no own tools, and its plan is no run card.

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// maxToolCalls bounds the agent's tool calls a turn tracks; beyond it they
// are not shown, so an agent cannot grow the bridge's memory without end.
const maxToolCalls = 4096

// maxQueuedUpdates bounds the updates waiting to be streamed; an agent that
// outruns the bridge by more is held back (and acp-go-sdk, whose own queue
// then fills, closes its connection: the turn fails rather than the memory
// growing without end).
const maxQueuedUpdates = 1 << 16

// maxMergedChunk bounds the text of consecutive chunks merged into one part.
const maxMergedChunk = 64 << 10

// turnState is one turn's stream. acp-go-sdk delivers notifications one at
// a time, in order, and closes the connection when more than 1,024 wait:
// so SessionUpdate only queues each update (enqueue), merging consecutive
// text chunks, and a goroutine of the turn streams them (drain). The turn
// ends from runTurn, after the queue is drained: mu guards the stream, qmu
// the queue.
type turnState struct {
	d        *document
	t        *client.Turn
	ctx      context.Context // ends with the turn
	isolated bool            // an isolated session's turn: text and reasoning only

	qmu     sync.Mutex
	qcond   *sync.Cond // signalled when the queue shrinks
	queue   []sdk.SessionUpdate
	closing bool
	wake    chan struct{} // cap 1: the queue has updates, or is closing
	drained chan struct{} // closed when drain returns

	mu      sync.Mutex
	ended   bool
	seq     int
	block   string // "text" or "reasoning" while one is open
	blockID string
	err     error // the first send that failed
	calls   map[sdk.ToolCallId]*ownCall
	run     *planRun // the agent's plan as a run card (plan.go)
}

type ownCall struct {
	id, name string
	hidden   bool // a call of the bridge's MCP server: Chopin shows it already
	done     bool
}

func newTurnState(ctx context.Context, d *document, t *client.Turn, isolated bool) *turnState {
	s := &turnState{ctx: ctx, d: d, t: t, isolated: isolated, calls: map[sdk.ToolCallId]*ownCall{},
		wake: make(chan struct{}, 1), drained: make(chan struct{})}
	s.qcond = sync.NewCond(&s.qmu)
	go s.drain()
	return s
}

// enqueue queues an update for drain, merging a text chunk into the chunk
// of the same kind queued just before it.
func (s *turnState) enqueue(u sdk.SessionUpdate) {
	s.qmu.Lock()
	for len(s.queue) >= maxQueuedUpdates && !s.closing {
		s.qcond.Wait()
	}
	if s.closing {
		s.qmu.Unlock()
		return
	}
	if n := len(s.queue); n > 0 && !mergeChunk(&s.queue[n-1], u) {
		s.queue = append(s.queue, u)
	} else if n == 0 {
		s.queue = append(s.queue, u)
	}
	s.qmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// mergeChunk appends u's text to last when both are text chunks of the same
// kind, and reports whether it did.
func mergeChunk(last *sdk.SessionUpdate, u sdk.SessionUpdate) bool {
	text := func(x sdk.SessionUpdate) (kind int, t *sdk.ContentBlockText) {
		switch {
		case x.AgentMessageChunk != nil:
			return 1, x.AgentMessageChunk.Content.Text
		case x.AgentThoughtChunk != nil:
			return 2, x.AgentThoughtChunk.Content.Text
		}
		return 0, nil
	}
	k1, t1 := text(*last)
	k2, t2 := text(u)
	if k1 == 0 || k1 != k2 || t1 == nil || t2 == nil || len(t1.Text)+len(t2.Text) > maxMergedChunk {
		return false
	}
	merged := sdk.ContentBlock{Text: &sdk.ContentBlockText{Type: "text", Text: t1.Text + t2.Text}}
	if k1 == 1 {
		*last = sdk.SessionUpdate{AgentMessageChunk: &sdk.SessionUpdateAgentMessageChunk{SessionUpdate: "agent_message_chunk", Content: merged}}
	} else {
		*last = sdk.SessionUpdate{AgentThoughtChunk: &sdk.SessionUpdateAgentThoughtChunk{SessionUpdate: "agent_thought_chunk", Content: merged}}
	}
	return true
}

// drain streams the queued updates until the turn closes its queue.
func (s *turnState) drain() {
	defer close(s.drained)
	for range s.wake {
		for {
			s.qmu.Lock()
			batch, closing := s.queue, s.closing
			s.queue = nil
			s.qcond.Broadcast()
			s.qmu.Unlock()
			for _, u := range batch {
				s.update(u)
			}
			if len(batch) == 0 {
				if closing {
					return
				}
				break
			}
		}
	}
}

// closeQueue streams what is queued and stops taking updates.
func (s *turnState) closeQueue() {
	s.qmu.Lock()
	s.closing = true
	s.qcond.Broadcast()
	s.qmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.drained
}

func (s *turnState) send(p wire.StreamPart) error {
	if s.err != nil {
		return s.err
	}
	s.err = s.t.Send(p)
	return s.err
}

// update streams one session update.
func (s *turnState) update(u sdk.SessionUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	switch {
	case u.AgentMessageChunk != nil:
		s.chunk("text", u.AgentMessageChunk.Content)
	case u.AgentThoughtChunk != nil:
		s.chunk("reasoning", u.AgentThoughtChunk.Content)
	case s.isolated:
		// An isolated session declares no own tools (a tool-call part
		// would fail the turn) and reports no runs; nobody sees its rows.
	case u.ToolCall != nil:
		c := u.ToolCall
		s.toolCall(c.ToolCallId, c.Kind, c.Title, c.RawInput, c.Locations)
		s.toolStatus(c.ToolCallId, &c.Status, c.Content, c.RawOutput)
	case u.Plan != nil:
		s.plan(u.Plan.Entries)
	case u.ToolCallUpdate != nil:
		c := u.ToolCallUpdate
		if s.calls[c.ToolCallId] == nil {
			kind, title := sdk.ToolKindOther, ""
			if c.Kind != nil {
				kind = *c.Kind
			}
			if c.Title != nil {
				title = *c.Title
			}
			s.toolCall(c.ToolCallId, kind, title, c.RawInput, c.Locations)
		}
		s.toolStatus(c.ToolCallId, c.Status, c.Content, c.RawOutput)
	}
}

// chunk streams a content block as a delta of a text or reasoning block.
func (s *turnState) chunk(kind string, c sdk.ContentBlock) {
	if c.Text == nil || c.Text.Text == "" {
		return
	}
	if s.block != kind {
		s.closeBlock()
		s.seq++
		s.block, s.blockID = kind, kind+"-"+strconv.Itoa(s.seq)
		_ = s.send(wire.StreamPart{Type: kind + "-start", ID: s.blockID})
	}
	_ = s.send(wire.StreamPart{Type: kind + "-delta", ID: s.blockID, Delta: c.Text.Text})
}

func (s *turnState) closeBlock() {
	if s.block == "" {
		return
	}
	_ = s.send(wire.StreamPart{Type: s.block + "-end", ID: s.blockID})
	s.block, s.blockID = "", ""
}

// toolCall starts the row of one of the agent's own tool calls.
func (s *turnState) toolCall(id sdk.ToolCallId, kind sdk.ToolKind, title string, rawInput any, locations []sdk.ToolCallLocation) {
	if s.calls[id] != nil || len(s.calls) >= maxToolCalls {
		return
	}
	s.seq++
	c := &ownCall{id: "acp-" + strconv.Itoa(s.seq), name: ownToolName(kind), hidden: s.d.isHostToolTitle(title)}
	s.calls[id] = c
	if c.hidden {
		return
	}
	s.closeBlock()
	input := map[string]any{"title": title}
	if rawInput != nil {
		input["input"] = rawInput
	}
	if len(locations) > 0 {
		paths := make([]string, 0, len(locations))
		for _, l := range locations {
			paths = append(paths, l.Path)
		}
		input["paths"] = paths
	}
	raw, err := json.Marshal(input)
	if err != nil {
		raw = []byte(`{}`)
	}
	_ = s.send(wire.StreamPart{Type: wire.PartToolCall, ToolCallID: c.id, ToolName: c.name, Input: string(raw), ProviderExecuted: true})
}

// toolStatus ends a row when its call completed or failed.
func (s *turnState) toolStatus(id sdk.ToolCallId, status *sdk.ToolCallStatus, content []sdk.ToolCallContent, rawOutput any) {
	c := s.calls[id]
	if c == nil || c.hidden || c.done || status == nil {
		return
	}
	if *status != sdk.ToolCallStatusCompleted && *status != sdk.ToolCallStatusFailed {
		return
	}
	c.done = true
	s.sendResult(c, *status == sdk.ToolCallStatusFailed, toolOutput(content, rawOutput))
}

func (s *turnState) sendResult(c *ownCall, failed bool, text string) {
	var result json.RawMessage
	if failed {
		if text == "" {
			text = "The agent's tool failed."
		}
		result, _ = (&wire.ToolError{Code: "tool-failed", Message: cutText(text, wire.MaxNoteChars)}).Envelope()
	} else {
		result, _ = json.Marshal(cutText(text, maxToolText))
	}
	_ = s.send(wire.StreamPart{Type: wire.PartToolResult, ToolCallID: c.id, ToolName: c.name, Result: result, IsError: failed})
}

// maxToolText bounds the text of an own tool's result the bridge forwards.
const maxToolText = 16000

// toolOutput is the text of a tool call's content, else its raw output.
func toolOutput(content []sdk.ToolCallContent, rawOutput any) string {
	var b strings.Builder
	for _, c := range content {
		switch {
		case c.Content != nil && c.Content.Content.Text != nil:
			b.WriteString(c.Content.Content.Text.Text)
		case c.Diff != nil:
			b.WriteString("Changed " + c.Diff.Path + "\n")
		}
		if b.Len() > maxToolText {
			break
		}
	}
	if b.Len() == 0 && rawOutput != nil {
		if raw, err := json.Marshal(rawOutput); err == nil {
			return string(raw)
		}
	}
	return b.String()
}

func cutText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// end stops the stream: the open block closes, every row still running
// ends and the plan's run card ends with status (finished, stopped or
// failed), so nothing is left open when the turn ends.
func (s *turnState) end(status string) {
	s.closeQueue()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.endRun(status)
	s.closeBlock()
	for _, c := range s.calls {
		if !c.hidden && !c.done {
			c.done = true
			s.sendResult(c, true, "The turn ended before this tool call finished.")
		}
	}
	s.ended = true
}

// finish sends the finish part of a turn that ended at the agent's end.
func (s *turnState) finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stop := &wire.FinishReason{Unified: "stop", Raw: "end_turn"}
	_ = s.send(wire.StreamPart{Type: wire.PartFinish, FinishReason: stop, TotalUsage: &wire.Usage{}})
	return s.err
}

// isHostToolTitle says whether an agent's tool call is a call of the
// bridge's own MCP server: agents title those with the server's name and
// the tool's ("mcp__chopin__read_plan", "read_plan (chopin MCP Server)").
func (d *document) isHostToolTitle(title string) bool {
	low := strings.ToLower(title)
	if !strings.Contains(low, mcpServerName) {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tools {
		if strings.Contains(low, strings.ToLower(t.Name)) {
			return true
		}
	}
	return false
}
