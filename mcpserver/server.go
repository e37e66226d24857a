package mcpserver

// The server: the SDK's MCP server with Chopin's tools, behind the SDK's
// Streamable HTTP handler in JSON-response mode, and the checks the
// transport leaves to us (docs/mcp.md, "Transport" and "Errors"): a body
// over 4 MiB (413), not JSON (-32700) or not a JSON-RPC 2.0 message
// (-32600), a message without a session other than initialize (-32600),
// and whatever the SDK refuses in plain text are all answered as JSON-RPC
// errors; a method the transport does not serve is 405 with Allow; and at
// most SessionCap sessions live at once (sessions.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/room"
)

// Catalog is what the tools need of the document catalog. Errors are the
// catalog's refusals (*fault.Error) with their codes; see refusal.
type Catalog interface {
	Repositories(ctx context.Context) ([]Repository, error)
	Documents(ctx context.Context, q ListQuery) (Listing, error)
	// Document finds a document by its ID, DocumentAt by its repository
	// and a slug it has or had.
	Document(ctx context.Context, id string) (Document, error)
	DocumentAt(ctx context.Context, owner, repository, slug string) (Document, error)
	Create(ctx context.Context, c Creation) (d Document, replayed bool, err error)
	Rename(ctx context.Context, id, title string) (Document, error)
	Archive(ctx context.Context, id string) (Document, error)
	Restore(ctx context.Context, id string) (Document, error)
}

// Plans is what the tools need of a document's plan. Replace edits it as a
// person's HTTP edit does, through the room's journal, so open tabs rebase
// onto it; it returns the revision it made, and with an error the current
// one.
type Plans interface {
	View(ctx context.Context, id string) (room.PlanView, error)
	Brief(ctx context.Context, id string) (string, error)
	Replace(ctx context.Context, id string, revision int64, plan, author string) (int64, error)
	// UpdateReplay and RecordUpdate keep what update_document made under
	// an idempotency key, across restarts.
	UpdateReplay(ctx context.Context, id, key string) (hash string, revision int64, found bool, err error)
	RecordUpdate(ctx context.Context, id, key, hash string, revision int64) error
}

// Chat is what invoke_planner needs: post an instruction, referring to the
// documents and passages refs, and start a Planner turn with it (author ""
// posts a system follow-up).
type Chat interface {
	Invoke(ctx context.Context, id, author, instruction string, refs []room.ReferenceRequest) (messageID string, err error)
}

// Images keeps an uploaded image as one of a document's own.
type Images interface {
	SaveImage(ctx context.Context, id string, img picture.Image) error
}

// Options are what New needs besides the interfaces.
type Options struct {
	Origin  string // this instance's origin, for absolute document URLs
	Version string // Chopin's version, reported in initialize
	Logger  *slog.Logger
}

// Server is the MCP server with Chopin's tools.
type Server struct {
	// Set at construction.
	catalog Catalog
	plans   Plans
	chat    Chat
	images  Images
	history History // plans, when it keeps a history
	opt     Options
	mcp     *mcp.Server
	http    http.Handler

	// updates serialises update_document calls, so that a retry racing its
	// own first attempt is answered as a replay, not as a stale revision.
	updates sync.Mutex
	// opening serialises initialize requests, so that making room for a
	// session and making it are one step and SessionCap holds.
	opening  sync.Mutex
	sessions sessionUse
}

// MaxBody is the largest body /mcp takes, 4 MiB (4,194,304 bytes): the
// largest argument, an upload_image's base64 data, is under 1.4 MiB, and a
// plan under 256 KiB, escaped.
const MaxBody = 4 << 20

// sessionIdle is how long an MCP session lasts without a request: long
// enough that an agent left open overnight keeps its session, short enough
// that sessions nobody ends do not pile up.
const sessionIdle = 24 * time.Hour

// JSON-RPC error codes of the transport, besides JSON-RPC's own (-32700
// and -32600 for what cannot be read, -32601, -32602, -32603).
const (
	// RPCRefused is a request refused before its message was read:
	// sign-in, Origin, Host, the method or media type of the HTTP request,
	// and too many sessions busy at once.
	RPCRefused = -32000
	// RPCSessionNotFound is a session that has ended: initialize again.
	RPCSessionNotFound = -32001
)

// New makes the server.
func New(catalog Catalog, plans Plans, chat Chat, images Images, opt Options) *Server {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{catalog: catalog, plans: plans, chat: chat, images: images, opt: opt}
	s.history, _ = plans.(History)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "chopin", Title: "Chopin", Version: opt.Version},
		&mcp.ServerOptions{Instructions: instructions(), Logger: opt.Logger})
	s.mcp.AddReceivingMiddleware(codedErrors)
	for _, t := range s.tools() {
		s.mcp.AddTool(t.spec, t.handler)
	}
	s.http = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{
			JSONResponse:   true,
			SessionTimeout: sessionIdle,
			// app checks Host against the instance's own origin on every
			// route, which is stricter than the SDK's loopback check.
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        MaxBody,
			Logger:                     opt.Logger,
		})
	s.sessions.server = s.mcp
	return s
}

// codedErrors gives every error the SDK's server answers with a JSON-RPC
// code: an error without one would go out as code 0.
func codedErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var coded *jsonrpc.Error
		if err != nil && !errors.As(err, &coded) {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		return res, err
	}
}

// Allowed is the methods /mcp serves; any other is 405 with this as Allow.
// GET, which would open a stream for messages the server starts, is one of
// them: these tools never start one, so it answers 405 as the MCP
// specification allows, and no idle stream holds a connection open.
const Allowed = "POST, DELETE"

// ServeHTTP serves /mcp once app has admitted the request. Whatever it
// refuses, it answers with a JSON-RPC error object, with the request's id
// when it could be read.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete: // the client ends its session
		rw := &rpcWriter{ResponseWriter: w}
		s.http.ServeHTTP(rw, r)
		rw.finish()
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", Allowed)
		writeRPCError(w, http.StatusMethodNotAllowed, nil, RPCRefused,
			"Method not allowed: /mcp takes POST (and DELETE to end a session); it offers no event stream.", nil)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "The request body could not be read.", nil)
		return
	}
	if len(body) > MaxBody {
		writeRPCError(w, http.StatusRequestEntityTooLarge, leadingID(body), jsonrpc.CodeInvalidRequest,
			"The request is over 4 MiB (4,194,304 bytes), the most /mcp takes.", nil)
		return
	}
	if code, why := checkMessage(body); code != 0 {
		writeRPCError(w, http.StatusBadRequest, nil, code, why, nil)
		return
	}
	var msg struct {
		Method *string         `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	json.Unmarshal(body, &msg) // checkMessage read it
	session := r.Header.Get("Mcp-Session-Id")
	opening := session == "" && msg.Method != nil && *msg.Method == "initialize"
	if session == "" && !opening {
		writeRPCError(w, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest,
			"This message has no Mcp-Session-Id header: send initialize first, then the Mcp-Session-Id its answer gives on every later request.", nil)
		return
	}
	if method, id, unknown := unknownMethod(body); unknown {
		if id == nil { // a notification has no answer
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeRPCError(w, http.StatusOK, id, jsonrpc.CodeMethodNotFound, "Method not found: "+strconv.Quote(method)+".", nil)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	rw := &rpcWriter{ResponseWriter: w, id: msg.ID}
	if opening {
		s.open(rw, r)
	} else {
		done := s.sessions.begin(session)
		s.http.ServeHTTP(rw, r)
		done()
	}
	rw.finish()
}

// open serves an initialize, which makes a session: first, past
// SessionCap, the session idle longest ends.
func (s *Server) open(w *rpcWriter, r *http.Request) {
	s.opening.Lock()
	defer s.opening.Unlock()
	if !s.sessions.makeRoom(s.opt.Logger) {
		writeRPCError(w, http.StatusServiceUnavailable, w.id, RPCRefused, fmt.Sprintf(
			"All %d MCP sessions are answering a request at this moment: try again in a moment, or end a session you no longer use (DELETE /mcp).", SessionCap), nil)
		return
	}
	s.http.ServeHTTP(w, r)
	if id := w.Header().Get("Mcp-Session-Id"); id != "" && w.status < 300 {
		s.sessions.opened(id)
	}
}

// checkMessage finds what the SDK would answer as a plain-text 400, or
// read otherwise than it was meant: a body that is not JSON, one that is
// not a JSON-RPC 2.0 message (or a batch, which this protocol version does
// not have), and an id that is not a string or an integer JSON and
// JavaScript both read exactly.
func checkMessage(body []byte) (code int64, why string) {
	if !json.Valid(body) {
		return jsonrpc.CodeParseError, "The body is not JSON. Send one JSON-RPC 2.0 message."
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return jsonrpc.CodeInvalidRequest, "The body is not a JSON-RPC 2.0 message: send one object, not an array or a value."
	}
	var version string
	if json.Unmarshal(msg["jsonrpc"], &version) != nil || version != "2.0" {
		return jsonrpc.CodeInvalidRequest, `The body is not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0".`
	}
	_, hasMethod := msg["method"]
	_, hasResult := msg["result"]
	_, hasError := msg["error"]
	if !hasMethod && !hasResult && !hasError {
		return jsonrpc.CodeInvalidRequest, `The body is not a JSON-RPC 2.0 message: it has no "method".`
	}
	if raw, ok := msg["method"]; ok {
		var method string
		if json.Unmarshal(raw, &method) != nil || method == "" {
			return jsonrpc.CodeInvalidRequest, `The body is not a JSON-RPC 2.0 message: "method" must be a string.`
		}
	}
	raw, hasID := msg["id"]
	if !hasMethod && !hasID {
		return jsonrpc.CodeInvalidRequest, `The body is a JSON-RPC response without an "id": it answers nothing.`
	}
	if hasID && !validID(raw) {
		return jsonrpc.CodeInvalidRequest, `The body is not a JSON-RPC 2.0 message: "id" must be a string or an integer from -(2^53-1) to 2^53-1.`
	}
	return 0, ""
}

// validID reports an id the SDK reads as it was written: a string, or a
// whole number small enough that a float64 holds it exactly.
func validID(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, `"`) {
		return true
	}
	f, err := strconv.ParseFloat(t, 64)
	return err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53-1
}

// methods are the JSON-RPC methods the SDK's server handles; the SDK's
// transport answers any other with a plain-text 400, where JSON-RPC says
// -32601.
var methods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"completion/complete": true, "logging/setLevel": true, "server/discover": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/roots/list_changed": true,
}

// unknownMethod reports a request or notification for a method nobody
// serves, with its id (nil for a notification).
func unknownMethod(body []byte) (method string, id json.RawMessage, unknown bool) {
	var msg struct {
		Method *string         `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == nil || methods[*msg.Method] {
		return "", nil, false
	}
	return *msg.Method, msg.ID, true
}
