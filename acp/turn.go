package acp

// A turn: the turn's instructions, prompt and images (and, for JSON, a line
// asking for only JSON of the schema) become session/prompt;
// the agent's session updates stream as parts while it runs (updates.go);
// its stop reason ends the turn, and an abort or a Stop sends
// session/cancel.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// cancelGrace is how long an agent has to answer its prompt after
// session/cancel before the turn ends anyway.
const cancelGrace = 10 * time.Second

// ownToolPrefix is put before the ACP tool kinds the bridge declares as its
// own tools; host tools never start with it.
const ownToolPrefix = "agent_"

// ownToolKinds are the generic own tools, one per ACP tool kind.
var ownToolKinds = []string{"read", "edit", "execute", "search", "fetch", "think", "other"}

// ownToolName is the own tool a tool call of kind shows under.
func ownToolName(kind sdk.ToolKind) string {
	switch kind {
	case sdk.ToolKindRead, sdk.ToolKindEdit, sdk.ToolKindExecute, sdk.ToolKindSearch, sdk.ToolKindFetch, sdk.ToolKindThink:
		return ownToolPrefix + string(kind)
	case sdk.ToolKindDelete, sdk.ToolKindMove:
		return ownToolPrefix + "edit"
	}
	return ownToolPrefix + "other"
}

// stopWords fail a turn whose prompt stopped for a reason other than its
// end or a cancel.
var stopWords = map[sdk.StopReason]string{
	sdk.StopReasonRefusal:         "The agent refused to go on with this request.",
	sdk.StopReasonMaxTokens:       "The agent stopped: it reached its limit of tokens for one answer.",
	sdk.StopReasonMaxTurnRequests: "The agent stopped: it reached its limit of model requests for one turn.",
}

// runTurn runs one Chopin turn as one ACP prompt: a Planner turn in the
// document's ACP session, an isolated session's turn in its own
// (isolated.go).
func (d *document) runTurn(ctx context.Context, t *client.Turn) error {
	if t.Session.Mode == wire.ModeIsolated {
		return d.runIsolated(ctx, t)
	}
	log := d.logger().With("session", t.Session.ID, "turn", t.ID())
	d.setTools(t.Message.Tools)
	p, err := d.ensureProcess(ctx)
	if err != nil {
		d.mu.Lock()
		title := d.title
		d.mu.Unlock()
		d.b.problem(fmt.Sprintf("%s: %v", title, err))
		return err
	}
	sid, err := d.ensureSession(ctx, p)
	if err != nil {
		return err
	}
	if err := d.setModel(ctx, p, sid, t.Message.Model); err != nil {
		return err
	}
	names := make([]string, len(ownToolKinds))
	for i, k := range ownToolKinds {
		names[i] = ownToolPrefix + k
	}
	if err := t.DeclareTools(names...); err != nil {
		return err
	}
	d.mu.Lock()
	model := d.model
	d.mu.Unlock()
	st := newTurnState(ctx, d, t, false)
	if err := st.send(wire.StreamPart{Type: wire.PartStreamStart, ModelID: model}); err != nil {
		st.end("failed")
		return err
	}
	d.mu.Lock()
	d.turn = st
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if d.turn == st {
			d.turn = nil
		}
		d.mu.Unlock()
	}()
	log.Info("prompt sent")
	return d.prompt(ctx, st, p, sid, promptBlocks(t, p.init.AgentCapabilities.PromptCapabilities.Image))
}

// prompt sends blocks as session/prompt in sid and ends st's turn by the
// answer. When ctx ends first (Stop or abort) it sends session/cancel and
// gives the agent cancelGrace to answer.
func (d *document) prompt(ctx context.Context, st *turnState, p *process, sid sdk.SessionId, blocks []sdk.ContentBlock) error {
	log := d.logger().With("session", st.t.Session.ID, "turn", st.t.ID())
	type answer struct {
		r   sdk.PromptResponse
		err error
	}
	got := make(chan answer, 1)
	go func() {
		r, err := p.conn.Prompt(context.WithoutCancel(ctx), sdk.PromptRequest{SessionId: sid, Prompt: blocks})
		got <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-p.exited:
		d.forgetProcess(p)
		st.end("failed")
		return p.exitError("during the turn; the next @chopin starts it again")
	case <-ctx.Done():
		// Stop or abort: ask the agent to cancel, and give it a moment to
		// answer cancelled. An agent being stopped (the planner exits) is
		// asked nothing more.
		if p.stopping.Load() {
			st.end("stopped")
			return ctx.Err()
		}
		if err := p.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: sid}); err != nil {
			log.Warn("session/cancel", "err", err)
		}
		select {
		case a = <-got:
		case <-p.exited:
			d.forgetProcess(p)
		case <-time.After(cancelGrace):
			log.Warn("the agent did not answer its prompt after session/cancel")
		}
		st.end("stopped")
		return ctx.Err()
	}
	return d.endTurn(st, p, a.r, a.err)
}

// endTurn ends a turn whose prompt was answered: by its stop reason, or by
// the error the prompt returned.
func (d *document) endTurn(st *turnState, p *process, r sdk.PromptResponse, err error) error {
	// acp-go-sdk delivers every session/update that arrived before the
	// response before it returns the response; st.end drains them.
	if err != nil {
		st.end("failed")
		// A process that dies closes its stdout before its exit is seen.
		select {
		case <-p.exited:
		case <-time.After(2 * time.Second):
		}
		if p.hasExited() {
			d.forgetProcess(p)
			return p.exitError("during the turn; the next @chopin starts it again")
		}
		var re *sdk.RequestError
		if errors.As(err, &re) {
			return fmt.Errorf("The agent %s failed the turn: %s", p.name, re.Message)
		}
		return fmt.Errorf("The agent %s failed the turn: %v", p.name, err)
	}
	d.logger().Info("turn ended", "session", st.t.Session.ID, "turn", st.t.ID(), "stopReason", r.StopReason)
	switch r.StopReason {
	case sdk.StopReasonEndTurn:
		st.end("finished")
		return st.finish()
	case sdk.StopReasonCancelled:
		// Not asked by Chopin (that returned above): the agent gave up.
		st.end("stopped")
		return errors.New("The agent cancelled the turn by itself.")
	}
	st.end("failed")
	if words, ok := stopWords[r.StopReason]; ok {
		return errors.New(words)
	}
	return fmt.Errorf("The agent stopped for a reason Chopin does not know: %q.", r.StopReason)
}

// promptBlocks are the turn's instructions and prompt as text blocks, and
// its images as image blocks when the agent takes images. A turn whose
// responseFormat asks for JSON ends with a line saying so, with the schema:
// ACP has no structured output of its own.
func promptBlocks(t *client.Turn, images bool) []sdk.ContentBlock {
	var blocks []sdk.ContentBlock
	if t.Message.Instructions != "" {
		blocks = append(blocks, sdk.TextBlock(t.Message.Instructions))
	}
	blocks = append(blocks, sdk.TextBlock(t.Message.Prompt))
	for _, a := range t.Message.Attachments {
		switch {
		case a.Kind == "image" && images:
			blocks = append(blocks, sdk.ImageBlock(a.Data, a.MediaType))
		case a.Kind == "image":
			blocks = append(blocks, sdk.TextBlock(fmt.Sprintf("(The person attached the image %q, which this agent cannot read.)", a.Name)))
		default:
			// A text file: its text, named.
			if b, err := base64.StdEncoding.DecodeString(a.Data); err == nil && utf8.Valid(b) {
				blocks = append(blocks, sdk.TextBlock(fmt.Sprintf("The person attached the file %q:\n\n%s", a.Name, b)))
			}
		}
	}
	if rf := t.Message.ResponseFormat; rf != nil && rf.Type == "json" {
		blocks = append(blocks, sdk.TextBlock(jsonAnswerLine(rf)))
	}
	return blocks
}

// jsonAnswerLine tells the agent that its answer must be only JSON, of the
// schema when one is given.
func jsonAnswerLine(rf *wire.ResponseFormat) string {
	const only = "Your answer must be only JSON: no other text before or after it, no Markdown, no code fence."
	if len(rf.Schema) == 0 {
		return only
	}
	schema := string(rf.Schema)
	var b bytes.Buffer
	if json.Compact(&b, rf.Schema) == nil {
		schema = b.String()
	}
	line := only + " It must match this JSON Schema"
	if rf.Description != "" {
		line += " (" + rf.Description + ")"
	}
	return line + ":\n" + schema
}
