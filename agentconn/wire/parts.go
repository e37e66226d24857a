package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The parts of a turn's stream ("Stream parts") and the structured tool
// error ("Structured tool errors") a failed tool's result may carry.

// StreamPart is one AI SDK HarnessV1StreamPart, without metadata fields
// ("Stream parts"). It is one flat struct for every part type; which fields a
// type carries, and which of them are optional, is the table streamPartKeys,
// which drives both strict decoding and encoding, so "delta": "" is sent for a
// text-delta and never a field another type owns.
type StreamPart struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Delta            string          `json:"delta"`
	ModelID          string          `json:"modelId"`
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Title            string          `json:"title"`
	Input            string          `json:"input"` // JSON text of a tool-call's arguments
	ProviderExecuted bool            `json:"providerExecuted"`
	Dynamic          bool            `json:"dynamic"`
	Result           json.RawMessage `json:"result"`
	IsError          bool            `json:"isError"`
	Preliminary      bool            `json:"preliminary"`
	FinishReason     *FinishReason   `json:"finishReason"`
	Usage            *Usage          `json:"usage"`
	TotalUsage       *Usage          `json:"totalUsage"`
	Error            string          `json:"error"`
}

// Stream part types.
const (
	PartStreamStart    = "stream-start"
	PartTextStart      = "text-start"
	PartTextDelta      = "text-delta"
	PartTextEnd        = "text-end"
	PartReasoningStart = "reasoning-start"
	PartReasoningDelta = "reasoning-delta"
	PartReasoningEnd   = "reasoning-end"
	PartToolInputStart = "tool-input-start"
	PartToolInputDelta = "tool-input-delta"
	PartToolInputEnd   = "tool-input-end"
	PartToolCall       = "tool-call"
	PartToolResult     = "tool-result"
	PartFinishStep     = "finish-step"
	PartFinish         = "finish"
	PartError          = "error"
)

// streamPartKeys lists each part type's fields in wire order; "?" marks an
// optional one.
var streamPartKeys = parseVariantTable(map[string]string{
	PartStreamStart:    "modelId?",
	PartTextStart:      "id",
	PartTextDelta:      "id delta",
	PartTextEnd:        "id",
	PartReasoningStart: "id",
	PartReasoningDelta: "id delta",
	PartReasoningEnd:   "id",
	PartToolInputStart: "id toolName providerExecuted? dynamic? title?",
	PartToolInputDelta: "id delta",
	PartToolInputEnd:   "id",
	PartToolCall:       "toolCallId toolName input providerExecuted dynamic?",
	PartToolResult:     "toolCallId toolName result isError? preliminary? dynamic?",
	PartFinishStep:     "finishReason usage",
	PartFinish:         "finishReason totalUsage",
	PartError:          "error",
})

func (StreamPart) variantKeys() (string, map[string][]variantKey) { return "type", streamPartKeys }

// MarshalJSON writes exactly the fields of p's type.
func (p StreamPart) MarshalJSON() ([]byte, error) { return marshalVariant(p) }

// FinishReason says why a step or the turn finished.
type FinishReason struct {
	Unified string `json:"unified"` // stop, length, content-filter, tool-calls, error, other
	Raw     string `json:"raw,omitempty"`
}

// Usage counts tokens; every count is optional and non-negative.
type Usage struct {
	InputTokens  *InputTokens  `json:"inputTokens,omitempty"`
	OutputTokens *OutputTokens `json:"outputTokens,omitempty"`
}

// InputTokens is Usage.inputTokens.
type InputTokens struct {
	Total      *int64 `json:"total,omitempty"`
	NoCache    *int64 `json:"noCache,omitempty"`
	CacheRead  *int64 `json:"cacheRead,omitempty"`
	CacheWrite *int64 `json:"cacheWrite,omitempty"`
}

// OutputTokens is Usage.outputTokens.
type OutputTokens struct {
	Total     *int64 `json:"total,omitempty"`
	Text      *int64 `json:"text,omitempty"`
	Reasoning *int64 `json:"reasoning,omitempty"`
}

func (p *StreamPart) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	switch p.Type {
	case PartTextStart, PartTextEnd, PartReasoningStart, PartReasoningEnd, PartToolInputEnd,
		PartTextDelta, PartReasoningDelta, PartToolInputDelta:
		add(checkID("part.id", p.ID))
	case PartToolInputStart:
		add(checkID("part.id", p.ID))
		add(checkName("part.toolName", p.ToolName))
		add(checkNote("part.title", p.Title))
	case PartToolCall:
		add(checkID("part.toolCallId", p.ToolCallID))
		add(checkName("part.toolName", p.ToolName))
		if !p.ProviderExecuted {
			add(errors.New(`part.providerExecuted must be true: tool-call parts are for the client's own tools`))
		}
	case PartToolResult:
		add(checkID("part.toolCallId", p.ToolCallID))
		add(checkName("part.toolName", p.ToolName))
	case PartFinishStep, PartFinish:
		add(p.FinishReason.validate())
		u := p.Usage
		if p.Type == PartFinish {
			u = p.TotalUsage
		}
		add(u.validate())
	case PartError:
		add(checkNote("part.error", p.Error))
	}
	return errors.Join(errs...)
}

var finishReasons = set("stop", "length", "content-filter", "tool-calls", "error", "other")

func (f *FinishReason) validate() error {
	if !finishReasons[f.Unified] {
		return fmt.Errorf("part.finishReason.unified %q is not one of stop, length, content-filter, tool-calls, error, other", f.Unified)
	}
	return checkShort("part.finishReason.raw", f.Raw)
}

func (u *Usage) validate() error {
	var counts []*int64
	if t := u.InputTokens; t != nil {
		counts = append(counts, t.Total, t.NoCache, t.CacheRead, t.CacheWrite)
	}
	if t := u.OutputTokens; t != nil {
		counts = append(counts, t.Total, t.Text, t.Reasoning)
	}
	for _, c := range counts {
		if c != nil && *c < 0 {
			return errors.New("part usage counts must not be negative")
		}
	}
	return nil
}

// ToolError is the structured tool error ("Structured tool errors"): what a
// failed tool says in a form Chat can show. Host tools return it (or wrap it)
// from Room.CallTool; a client's own tool sends it as a failed tool-result.
type ToolError struct {
	Code    string `json:"code"`
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message"`
}

func (e *ToolError) Error() string {
	if e.Kind != "" {
		return e.Kind + ": " + e.Message
	}
	return e.Code + ": " + e.Message
}

type toolErrorEnvelope struct {
	Error ToolError `json:"error"`
}

// Envelope is e as a failed tool's result carries it: {"error": e}.
func (e *ToolError) Envelope() (json.RawMessage, error) {
	return Marshal(toolErrorEnvelope{Error: *e})
}

// ParseToolError recognises the structured tool error envelope, or its JSON
// text, in the result of a failed, final tool-result. Anything that does not
// match exactly is an ordinary result, so ok is false.
func ParseToolError(result json.RawMessage) (e *ToolError, ok bool) {
	var text string
	if len(result) > 0 && result[0] == '"' && json.Unmarshal(result, &text) == nil {
		result = json.RawMessage(text)
	}
	if !json.Valid(result) {
		return nil, false
	}
	var env toolErrorEnvelope
	if err := DecodeStrict(result, &env); err != nil {
		return nil, false
	}
	if !isIdentifier(env.Error.Code) || (env.Error.Kind != "" && !isIdentifier(env.Error.Kind)) {
		return nil, false
	}
	if n := runeCount(env.Error.Message); n < 1 || n > MaxNoteChars {
		return nil, false
	}
	return &env.Error, true
}

// isIdentifier reports whether s is a plain identifier of 1 to 128
// characters: an ASCII letter or digit, then letters, digits, ., _ or -. It
// is also the shape of a feature name.
func isIdentifier(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}
