package mcpserver

// How a tool answers: a success carries structuredContent and the same JSON
// as a text block (read_document: the page as text, and in
// structuredContent beside the document's fields); a domain refusal is a
// successful result with isError, structuredContent {code, message, ...}
// and a text block a model can read; malformed arguments are JSON-RPC
// -32602 (docs/mcp.md, "Results and refusals"). Clients differ in what they
// show their model: Claude Code and Codex pass structuredContent alone when
// there is one, Gemini CLI the text, so each holds all the model needs.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/room"
)

// Refusal codes of the tools (docs/mcp.md lists each tool's).
const (
	CodeRepositoryNotFound  = "repository-not-found"
	CodeDocumentUnavailable = "document-unavailable"
	CodeDocumentArchived    = "document-archived"
	CodeRevisionConflict    = "revision-conflict"
	CodeProtectedProjection = "protected-projection"
	CodeIdempotencyConflict = "idempotency-conflict"
	CodeUnsupportedType     = "unsupported-type"
	CodeSignatureMismatch   = "signature-mismatch"
	CodeTooLarge            = "too-large"
	CodeInvalidData         = "invalid-data"
	CodeInternal            = "internal"
)

// Refusal is a domain refusal: a tool result with isError.
type Refusal struct {
	Code    string
	Message string
	Extra   map[string]any // more fields of structuredContent, such as currentRevision
}

func (r *Refusal) Error() string { return r.Message }

func refuse(code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// invalidParams is a malformed call: JSON-RPC -32602.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// roomCodes renames the room's codes where MCP has its own word.
var roomCodes = map[string]string{
	room.CodeStaleRevision:     CodeRevisionConflict,
	room.CodeReservedComponent: CodeProtectedProjection,
	room.CodeDocumentTooLarge:  CodeTooLarge,
}

// catalogCodes renames the catalog's.
var catalogCodes = map[string]string{
	"channel-not-found": CodeDocumentUnavailable,
	"channel-archived":  CodeDocumentArchived,
}

// refusal reads an error from the interfaces as a Refusal, or reports that
// it is none (Chopin's own failure).
func refusal(err error) (*Refusal, bool) {
	var rf *Refusal
	var re *room.Error
	var fe *fault.Error
	switch {
	case errors.As(err, &rf):
		return rf, true
	case errors.As(err, &re) && re.Kind() != fault.Internal:
		code := re.Code
		if c, ok := roomCodes[code]; ok {
			code = c
		}
		return &Refusal{Code: code, Message: noPlannerWords(code, re.Message)}, true
	case errors.As(err, &fe) && fe.Kind != fault.Internal:
		code := fe.Code
		if c, ok := catalogCodes[code]; ok {
			code = c
		}
		return &Refusal{Code: code, Message: sentence(fe.Message)}, true
	}
	return nil, false
}

// sentence makes the catalog's lower-case messages read as sentences.
func sentence(s string) string {
	if s == "" {
		return s
	}
	if s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	if last := s[len(s)-1]; last != '.' && last != '?' && last != '!' {
		s += "."
	}
	return s
}

// result turns a handler's answer into the tool result.
func (s *Server) result(ctx context.Context, tool string, out any, err error) (*mcp.CallToolResult, error) {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return nil, err
	}
	if err != nil {
		rf, ok := refusal(err)
		if !ok {
			s.opt.Logger.ErrorContext(ctx, "MCP tool "+tool+" failed", "err", err)
			rf = refuse(CodeInternal, "Chopin could not do this because of a problem of its own. Try again; if it keeps failing, look at Chopin's log.")
		}
		structured := map[string]any{"code": rf.Code, "message": rf.Message}
		for k, v := range rf.Extra {
			structured[k] = v
		}
		return &mcp.CallToolResult{
			IsError:           true,
			StructuredContent: structured,
			Content:           []mcp.Content{&mcp.TextContent{Text: rf.Message + " (" + rf.Code + ")"}},
		}, nil
	}
	if page, ok := out.(pageResult); ok {
		return &mcp.CallToolResult{StructuredContent: page.structured, Content: []mcp.Content{&mcp.TextContent{Text: page.text}}}, nil
	}
	text, jerr := json.Marshal(out)
	if jerr != nil {
		return nil, jerr
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(text), Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}

// pageResult is read_document's: the page as text, and the document with
// that page as structuredContent.
type pageResult struct {
	text       string
	structured any
}

// noPlannerWords gives the refusal of a document with no Planner at all in
// Chopin's words: the agent protocol's text ("Connect a machine ... over
// the agent connection") is for the wire, and what an MCP client relays
// reaches a person.
func noPlannerWords(code, message string) string {
	if code != room.CodePlannerNotAttached || !strings.HasPrefix(message, "Connect a machine") {
		return message
	}
	return "No Planner is attached to this document, so nothing was posted. Connect a Planner first " +
		"(Connect a Planner in the document in Chopin, or `chopin planner` with the document's address), then call invoke_planner again."
}
