package planner

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// emitter turns a turn's model output into stream parts ("Stream parts" in
// the spec): text and reasoning as blocks of deltas, each tool call's input
// as tool-input parts before its host-tool-call, and a finish-step per round.
type emitter struct {
	t   *client.Turn
	seq int

	block, blockID string // the open text or reasoning block, if any
	wroteText      bool   // an earlier round streamed text
	roundText      bool   // this round has streamed text

	calls map[int]*roundCall // this round's tool calls, by the model's index
	used  map[string]bool    // every toolCallId of the turn: each is used once
}

// roundCall is one tool call of a round, under the id the turn uses for it.
type roundCall struct {
	ToolCall
	valid   bool // a name Chopin can be sent
	started bool // tool-input-start was sent
}

func (e *emitter) send(typ, id, delta string) error {
	var p wire.StreamPart
	p.Type, p.ID, p.Delta = typ, id, delta
	return e.t.Send(p)
}

func (e *emitter) streamStart(model string) error {
	var p wire.StreamPart
	p.Type, p.ModelID = "stream-start", model
	return e.t.Send(p)
}

func (e *emitter) newRound() {
	e.calls = map[int]*roundCall{}
	e.roundText = false
}

// event streams one event of the model's answer.
func (e *emitter) event(ev Event) error {
	switch ev.Kind {
	case EventText:
		if err := e.open("text"); err != nil {
			return err
		}
		delta := ev.Delta
		if !e.roundText && e.wroteText {
			// Chat shows a turn's text as one message: keep what the model
			// says after its tool calls a paragraph apart from what it said
			// before them.
			delta = "\n\n" + delta
		}
		e.roundText, e.wroteText = true, true
		return e.send("text-delta", e.blockID, delta)
	case EventReasoning:
		if err := e.open("reasoning"); err != nil {
			return err
		}
		return e.send("reasoning-delta", e.blockID, ev.Delta)
	case EventToolStart:
		if err := e.close(); err != nil {
			return err
		}
		c := &roundCall{ToolCall: ToolCall{ID: e.callID(ev.ID), Type: "function"}, valid: validName(ev.Name)}
		c.Function.Name = ev.Name
		e.calls[ev.Index] = c
		if !c.valid {
			return nil
		}
		c.started = true
		var p wire.StreamPart
		p.Type, p.ID, p.ToolName = "tool-input-start", c.ID, c.Function.Name
		return e.t.Send(p)
	case EventToolInput:
		if c := e.calls[ev.Index]; c != nil && c.started {
			return e.send("tool-input-delta", c.ID, ev.Delta)
		}
	}
	return nil
}

// open starts a block of kind unless one is open already.
func (e *emitter) open(kind string) error {
	if e.block == kind {
		return nil
	}
	if err := e.close(); err != nil {
		return err
	}
	e.seq++
	e.block, e.blockID = kind, kind+"-"+strconv.Itoa(e.seq)
	return e.send(kind+"-start", e.blockID, "")
}

func (e *emitter) close() error {
	if e.block == "" {
		return nil
	}
	kind, id := e.block, e.blockID
	e.block, e.blockID = "", ""
	return e.send(kind+"-end", id, "")
}

// endRound closes what the round left open and returns its tool calls in
// the model's order, with their final arguments. A call the model never
// named is left out: there is nothing to run or answer.
func (e *emitter) endRound(calls []ToolCall) ([]roundCall, error) {
	if err := e.close(); err != nil {
		return nil, err
	}
	var out []roundCall
	for i, tc := range calls {
		c := e.calls[i]
		if c == nil {
			if tc.Function.Name == "" {
				continue
			}
			c = &roundCall{ToolCall: ToolCall{ID: e.callID(tc.ID), Type: "function"}, valid: validName(tc.Function.Name)}
		}
		c.Function = tc.Function
		if c.started {
			if err := e.send("tool-input-end", c.ID, ""); err != nil {
				return nil, err
			}
		}
		out = append(out, *c)
	}
	return out, nil
}

// callID is the toolCallId for a call: the model's own id when it is one
// the protocol accepts and the turn has not used, else one of the
// Planner's. Some servers number every round's calls from zero, and an id
// may be used once per turn.
func (e *emitter) callID(model string) string {
	id := model
	if n := utf8.RuneCountInString(id); n < 1 || n > 128 || e.used[id] {
		for {
			e.seq++
			id = fmt.Sprintf("call-%d", e.seq)
			if !e.used[id] {
				break
			}
		}
	}
	e.used[id] = true
	return id
}

func (e *emitter) finishStep(raw string, u *Usage) error { return e.sendFinish("finish-step", raw, u) }

func (e *emitter) finish(raw string, total *Usage) error { return e.sendFinish("finish", raw, total) }

func (e *emitter) sendFinish(typ, raw string, u *Usage) error {
	var p wire.StreamPart
	p.Type = typ
	p.FinishReason = &wire.FinishReason{Unified: unifiedReason(raw), Raw: cutRunes(raw, wire.MaxShortChars)}
	p.Usage = &wire.Usage{}
	if u != nil {
		p.Usage.InputTokens = &wire.InputTokens{Total: count(u.PromptTokens)}
		p.Usage.OutputTokens = &wire.OutputTokens{Total: count(u.CompletionTokens)}
		if d := u.PromptDetails; d != nil {
			p.Usage.InputTokens.CacheRead = count(d.CachedTokens)
		}
		if d := u.CompletionDetails; d != nil {
			p.Usage.OutputTokens.Reasoning = count(d.ReasoningTokens)
		}
	}
	if typ == "finish" {
		p.TotalUsage, p.Usage = p.Usage, nil
	}
	return e.t.Send(p)
}

func count(n int64) *int64 {
	n = max(n, 0)
	return &n
}

// unifiedReason maps OpenAI's finish_reason to the spec's unified reasons.
func unifiedReason(raw string) string {
	switch raw {
	case "stop", "length":
		return raw
	case "tool_calls", "function_call":
		return "tool-calls"
	case "content_filter":
		return "content-filter"
	}
	return "other"
}

func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
