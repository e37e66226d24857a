package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The messages of the spec's "Handshake", "Server to client" and "Client to
// server" sections, one struct each, and Encode, which writes a message's
// exact wire form. Each feature's own messages are in its file.

// Message is one protocol message: one JSON object in one text frame, whose
// "type" is MessageType. The structs below carry every field except "type",
// which Encode adds and DecodeClientFrame/DecodeServerFrame check, so a value
// can never disagree with its own wire type.
type Message interface {
	MessageType() string
}

// Messages from the server to the client ("Server to client", "Handshake").

// Attached accepts an attach.
type Attached struct {
	Version  int              `json:"version"`
	Document AttachedDocument `json:"document"`
	// Features is present only when the client sent Chopin-Agent-Features:
	// nil leaves it out, an empty slice answers "none of them".
	Features []string `json:"features,omitzero"`
}

// AttachedDocument names the document a link attached.
type AttachedDocument struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Repository string `json:"repository"`
	URL        string `json:"url,omitempty"`
}

// Refused refuses an attach, or ends an attached link; a close follows.
type Refused struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Retry is set only with unavailable: the server could not decide.
	Retry bool `json:"retry,omitempty"`
}

// Start opens a session; the client answers Started or StartFailed.
type Start struct {
	Session string `json:"session"`
	Mode    string `json:"mode"` // ModePlanner or ModeIsolated
}

// Session modes.
const (
	ModePlanner  = "planner"
	ModeIsolated = "isolated" // a background job: no tools of its own, no Decisions
)

// Turn runs one turn in a started session.
type Turn struct {
	Session        string          `json:"session"`
	Turn           string          `json:"turn"`
	Prompt         string          `json:"prompt"`
	Instructions   string          `json:"instructions,omitempty"`
	Model          string          `json:"model,omitempty"`
	ThinkingLevel  string          `json:"thinkingLevel,omitempty"` // capability-catalog
	Attachments    []Attachment    `json:"attachments,omitempty"`   // attachments
	ChatMessage    string          `json:"message,omitempty"`       // retry-turn: the Chat message it answers
	Retry          bool            `json:"retry,omitempty"`         // retry-turn
	Tools          []Tool          `json:"tools"`
	ResponseFormat *ResponseFormat `json:"responseFormat,omitempty"`
}

// Tool is one of Chopin's host tools offered in a turn.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// ResponseFormat is { "type": "text" } or { "type": "json", ... }.
type ResponseFormat struct {
	Type        string          `json:"type"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
}

// Abort stops a turn; the client answers with TurnEnd.
type Abort struct {
	Session string `json:"session"`
	Turn    string `json:"turn"`
}

// HostToolResult answers a HostToolCall.
type HostToolResult struct {
	Session    string          `json:"session"`
	Turn       string          `json:"turn"`
	ToolCallID string          `json:"toolCallId"`
	Output     json.RawMessage `json:"output"`
	IsError    bool            `json:"isError,omitempty"`
}

// InputResult answers an InputRequest; Value's shape depends on the
// question's method and the status (see Answer).
type InputResult struct {
	Request string          `json:"request"`
	Status  string          `json:"status"`
	Value   json.RawMessage `json:"value,omitempty"`
	Message string          `json:"message,omitempty"`
}

// Stop is Stop Planner: pause every workflow run of the session, or only Run.
type Stop struct {
	Request string `json:"request"`
	Session string `json:"session"`
	Run     string `json:"run,omitempty"`
}

// Resume is Resume Planner, the counterpart of Stop.
type Resume struct {
	Request string `json:"request"`
	Session string `json:"session"`
	Run     string `json:"run,omitempty"`
}

// Destroy ends a session.
type Destroy struct {
	Session string `json:"session"`
}

// ProtocolError precedes a close for a protocol violation (wire type "error").
type ProtocolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Messages from the client to the server ("Handshake", "Client to server").

// Attach is the client's first message.
type Attach struct {
	Version  int       `json:"version"`
	Document string    `json:"document"` // a document id or its Chopin URL
	Checkout *Checkout `json:"checkout,omitempty"`
}

// Checkout describes the client's working tree; informational only.
type Checkout struct {
	Origin string `json:"origin,omitempty"`
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
}

// Started answers Start.
type Started struct {
	Session string `json:"session"`
}

// StartFailed answers Start when the client cannot open the session.
type StartFailed struct {
	Session string `json:"session"`
	Message string `json:"message"`
}

// Tools declares the client's own tools a turn may call.
type Tools struct {
	Session string   `json:"session"`
	Turn    string   `json:"turn"`
	Names   []string `json:"names"`
}

// Part streams one StreamPart of a turn.
type Part struct {
	Session string     `json:"session"`
	Turn    string     `json:"turn"`
	Part    StreamPart `json:"part"`
}

// HostToolCall runs one of the turn's host tools; Input is JSON text.
type HostToolCall struct {
	Session    string `json:"session"`
	Turn       string `json:"turn"`
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Input      string `json:"input"`
}

// TurnEnd ends a turn: finished, failed (Message is the error) or aborted.
type TurnEnd struct {
	Session string `json:"session"`
	Turn    string `json:"turn"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// InputRequest asks the document's members one question call.
type InputRequest struct {
	Request         string `json:"request"`
	Session         string `json:"session"`
	WorkflowRunID   string `json:"workflowRunId,omitempty"`
	WorkflowStageID string `json:"workflowStageId,omitempty"`
	RootRunID       string `json:"rootRunId,omitempty"`
	Block           *Block `json:"block,omitempty"`
	Input           Input  `json:"input"`
}

// Block names a block of the document by index and digest.
type Block struct {
	Index  int    `json:"index"`
	Digest string `json:"digest"`
}

// InputCancel withdraws a question the client asked.
type InputCancel struct {
	Request string `json:"request"`
}

// Runs is a complete report of a session's workflow runs.
type Runs struct {
	Session string    `json:"session"`
	Active  []string  `json:"active"`
	Paused  []string  `json:"paused"`
	Cards   []RunCard `json:"cards"`
}

// ControlResult answers Stop or Resume.
type ControlResult struct {
	Request string `json:"request"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
}

// Detach ends the link by the client's choice (close 1000).
type Detach struct{}

func (Attached) MessageType() string       { return "attached" }
func (Refused) MessageType() string        { return "refused" }
func (Start) MessageType() string          { return "start" }
func (Turn) MessageType() string           { return "turn" }
func (Abort) MessageType() string          { return "abort" }
func (HostToolResult) MessageType() string { return "host-tool-result" }
func (InputResult) MessageType() string    { return "input-result" }
func (Stop) MessageType() string           { return "stop" }
func (Resume) MessageType() string         { return "resume" }
func (Destroy) MessageType() string        { return "destroy" }
func (ProtocolError) MessageType() string  { return "error" }
func (Attach) MessageType() string         { return "attach" }
func (Started) MessageType() string        { return "started" }
func (StartFailed) MessageType() string    { return "start-failed" }
func (Tools) MessageType() string          { return "tools" }
func (Part) MessageType() string           { return "part" }
func (HostToolCall) MessageType() string   { return "host-tool-call" }
func (TurnEnd) MessageType() string        { return "turn-end" }
func (InputRequest) MessageType() string   { return "input-request" }
func (InputCancel) MessageType() string    { return "input-cancel" }
func (Runs) MessageType() string           { return "runs" }
func (ControlResult) MessageType() string  { return "control-result" }
func (Detach) MessageType() string         { return "detach" }

// Encode returns m's wire form: its fields with "type" first. HTML is not
// escaped, so text reaches the other side as written.
func Encode(m Message) ([]byte, error) {
	typ := m.MessageType() // a plain name: it needs no escaping
	var b bytes.Buffer
	b.Grow(len(typ) + 256)
	b.WriteString(`{"type":"`)
	b.WriteString(typ)
	b.WriteByte('"')
	at := b.Len()
	if err := encodeJSON(&b, m); err != nil {
		return nil, fmt.Errorf("encode %s: %w", typ, err)
	}
	// The fields' object follows the type: its brace becomes the comma
	// between them, or goes when it holds nothing.
	out := b.Bytes()
	switch body := out[at:]; {
	case len(body) < 2 || body[0] != '{':
		return nil, fmt.Errorf("encode %s: not an object", typ)
	case body[1] == '}':
		return append(out[:at], '}'), nil
	default:
		body[0] = ','
		return out, nil
	}
}

// Marshal is json.Marshal without HTML escaping, as Encode writes values.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeJSON(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeJSON appends v's JSON to b as Marshal writes it.
func encodeJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // the newline Encode ends a value with
	return nil
}
