package planner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// runTurn runs one turn: round after round, the conversation goes to the
// model, its answer streams to Chopin as parts, and the host tools it calls
// run in Chopin, their results going back to the model, until it answers
// without calling a tool. A nil return ends the turn finished (aborted after
// an abort); an error fails it with the error's text.
func (p *Planner) runTurn(ctx context.Context, t *client.Turn) error {
	m := t.Message
	model := cmp.Or(m.Model, p.model)
	log := p.log.With("session", t.Session.ID, "turn", t.ID(), "model", model)
	if model == "" {
		return errors.New("No model is chosen for this Planner. Run chopin planner again with --model.")
	}
	req := ChatRequest{
		Model:           model,
		Messages:        conversation(m.Instructions, userMessage(t)),
		StreamOptions:   &StreamOptions{IncludeUsage: true},
		ReasoningEffort: p.turnEffort(t),
	}
	// An isolated session is a background job's: it calls no tools and
	// takes no steers, and shares nothing with the document's Chat session.
	isolated := t.Session.Mode == wire.ModeIsolated
	if !isolated {
		for _, tool := range m.Tools {
			req.Tools = append(req.Tools, functionTool(tool.Name, tool.Description, tool.InputSchema))
		}
	}
	if rf := m.ResponseFormat; rf != nil {
		req.ResponseFormat = responseFormat(rf.Type, rf.Schema, rf.Name, rf.Description)
	}
	// The checkout is looked up at every turn, so a change made in Chopin
	// applies to the next one.
	tc := p.checkoutFor(ctx, t.Session.Link())
	own, err := p.offerCheckout(t, tc, &req)
	if err != nil {
		return err
	}
	log.Info("turn started", "tools", len(req.Tools), "checkout", len(own) > 0, "isolated", isolated)

	if !isolated {
		p.steers.open(t)
		defer p.steers.close(t)
	}
	out := &emitter{t: t, used: map[string]bool{}}
	if err := out.streamStart(model); err != nil {
		return err
	}
	var total *Usage // nil while the server has sent no counts
	for round := 1; round <= MaxRounds; round++ {
		out.newRound()
		c, err := p.server.Stream(ctx, req, out.event)
		if fallback := jsonModeFallback(req.ResponseFormat, err); fallback != nil {
			// A model server without structured output: JSON mode, and the
			// answer checked against the schema below.
			log.Info("the model server refused a JSON schema; using JSON mode", "err", err)
			req.ResponseFormat = fallback
			c, err = p.server.Stream(ctx, req, out.event)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err() // aborted: the client ends the turn aborted
			}
			err = p.explain(ctx, model, err)
			log.Info("turn failed", "err", err)
			return err
		}
		calls, err := out.endRound(c.ToolCalls)
		if err != nil {
			return err
		}
		if c.Usage != nil {
			if total == nil {
				total = &Usage{}
			}
			total.add(c.Usage)
		}
		assistant := ChatMessage{Role: "assistant", Content: c.Content}
		for _, call := range calls {
			assistant.ToolCalls = append(assistant.ToolCalls, call.ToolCall)
		}
		req.Messages = append(req.Messages, assistant)
		for _, call := range calls {
			var result string
			if call.valid && own[call.Function.Name] {
				result, err = p.runOwnTool(ctx, t, tc, call)
			} else {
				result, err = p.callTool(ctx, t, call)
			}
			if err != nil {
				return err
			}
			req.Messages = append(req.Messages, ChatMessage{Role: "tool", ToolCallID: call.ID, Content: result})
		}
		if err := out.finishStep(c.FinishReason, c.Usage); err != nil {
			return err
		}
		// A person's steers are read before the next call to the model; one
		// that came while the model answered without tools gets a round.
		var steered []string
		if !isolated {
			steered = p.steers.next(t, len(calls) == 0)
		}
		for _, prompt := range steered {
			req.Messages = append(req.Messages, ChatMessage{Role: "user", Content: prompt})
		}
		if len(calls) == 0 && len(steered) == 0 {
			if rf := m.ResponseFormat; rf != nil && rf.Type == "json" {
				if err := checkJSON(c.Content, rf.Schema); err != nil {
					log.Info("turn answered without the JSON asked for", "err", err)
					return err
				}
			}
			log.Info("turn finished", "rounds", round, "finish", c.FinishReason)
			return out.finish(c.FinishReason, total)
		}
	}
	log.Info("turn stopped after the round limit", "rounds", MaxRounds)
	return fmt.Errorf("The model was still calling tools after %d rounds, so this Planner stopped the turn. Ask again with a narrower request.", MaxRounds)
}

// explain turns a model server's refusal of a model into the person's words.
func (p *Planner) explain(ctx context.Context, model string, err error) error {
	var se *StatusError
	if !errors.As(err, &se) {
		return err
	}
	if se.Status == http.StatusNotFound || (se.Status == http.StatusBadRequest && strings.Contains(strings.ToLower(se.Message), "model")) {
		var unknown *UnknownModelError
		if cerr := p.server.CheckModel(ctx, model); errors.As(cerr, &unknown) {
			return unknown
		}
	}
	return err
}

// callTool runs one host tool call in Chopin and returns what the model
// reads: the tool's text, or what went wrong. Only the link or the turn
// ending is an error.
func (p *Planner) callTool(ctx context.Context, t *client.Turn, call roundCall) (string, error) {
	if !call.valid {
		return fmt.Sprintf("Error: there is no tool named %q.", call.Function.Name), nil
	}
	input := call.Function.Arguments
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	out, err := t.CallToolID(ctx, call.ID, call.Function.Name, input)
	var failed *client.ToolResultError
	switch {
	case errors.As(err, &failed):
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(failed.Output, &e) == nil && e.Error != "" {
			return "Error: " + e.Error, nil
		}
		return "Error: " + string(failed.Output), nil
	case err != nil:
		return "", err
	}
	// read_plan and read_child answer with text: give the model the text,
	// not a JSON string of it.
	var text string
	if json.Unmarshal(out, &text) == nil {
		return text, nil
	}
	return string(out), nil
}

func conversation(instructions string, user ChatMessage) []ChatMessage {
	var msgs []ChatMessage
	if instructions != "" {
		msgs = append(msgs, ChatMessage{Role: "system", Content: instructions})
	}
	return append(msgs, user)
}

// emptyObjectSchema is the parameters of a tool that declares none.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func functionTool(name, description string, schema json.RawMessage) FunctionTool {
	if len(schema) == 0 || string(schema) == "null" {
		schema = emptyObjectSchema
	}
	return FunctionTool{Type: "function", Function: FunctionDef{Name: name, Description: description, Parameters: schema}}
}

var schemaNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]+`) })

// responseFormat is a turn's responseFormat as OpenAI's response_format:
// nothing for text, json_schema with a schema, json_object without one.
func responseFormat(typ string, schema json.RawMessage, name, description string) json.RawMessage {
	if typ != "json" {
		return nil
	}
	if len(schema) == 0 {
		return json.RawMessage(`{"type":"json_object"}`)
	}
	name = schemaNameRE().ReplaceAllString(name, "_")
	if name == "" {
		name = "response"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	type jsonSchema struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Schema      json.RawMessage `json:"schema"`
	}
	b, _ := json.Marshal(struct {
		Type       string     `json:"type"`
		JSONSchema jsonSchema `json:"json_schema"`
	}{"json_schema", jsonSchema{name, description, schema}})
	return b
}

func (u *Usage) add(v *Usage) {
	if v == nil {
		return
	}
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	if v.PromptDetails != nil {
		if u.PromptDetails == nil {
			u.PromptDetails = &struct {
				CachedTokens int64 `json:"cached_tokens"`
			}{}
		}
		u.PromptDetails.CachedTokens += v.PromptDetails.CachedTokens
	}
	if v.CompletionDetails != nil {
		if u.CompletionDetails == nil {
			u.CompletionDetails = &struct {
				ReasoningTokens int64 `json:"reasoning_tokens"`
			}{}
		}
		u.CompletionDetails.ReasoningTokens += v.CompletionDetails.ReasoningTokens
	}
}

// validName reports whether a tool name fits the protocol's name limit (1
// to 128 characters). A longer or empty one would be a malformed message
// that closes the link, so it never reaches Chopin.
func validName(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= 128
}
