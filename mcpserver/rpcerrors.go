package mcpserver

// Refusals on /mcp as JSON-RPC error objects: what this package refuses
// itself, what app refuses before the request reaches it (Refuse), and
// what the SDK's transport answers in plain text (rpcWriter), so that a
// client, and `chopin mcp` behind it, always reads an MCP message.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// writeRPCError answers with a JSON-RPC error response: id is the
// request's, or nil when it could not be read (JSON null).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, message string, data any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

// Refuse answers a request app refuses before /mcp serves it (sign-in,
// Origin, Host) with a JSON-RPC error of code RPCRefused, the request's id
// when its body gives one, and the HTTP API's code as data.code.
func Refuse(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	var id json.RawMessage
	if r.Method == http.MethodPost && r.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		id = leadingID(body)
	}
	writeRPCError(w, status, id, RPCRefused, message, map[string]string{"code": code})
}

// leadingID is the id of the JSON-RPC request that body holds or begins
// (a body cut short keeps the id it had before the cut), or nil.
func leadingID(body []byte) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(body))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			if validID(v) {
				return v
			}
			return nil
		}
	}
	return nil
}

// rpcWriter turns a plain-text refusal of the SDK's transport into a
// JSON-RPC error for the request (id), keeping its status: 404 (the
// session ended) is RPCSessionNotFound, another 400 -32600, anything else
// RPCRefused. Everything else passes through.
type rpcWriter struct {
	http.ResponseWriter
	id     json.RawMessage
	status int
	text   *bytes.Buffer // the plain text being replaced, or nil
}

func (w *rpcWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	if status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.text = &bytes.Buffer{}
		return // written in finish
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *rpcWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.text != nil {
		if w.text.Len() < 4096 {
			w.text.Write(p)
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *rpcWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.text == nil {
		f.Flush()
	}
}

func (w *rpcWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the JSON-RPC error that replaces a plain-text refusal.
func (w *rpcWriter) finish() {
	if w.text == nil {
		return
	}
	code, message := int64(RPCRefused), strings.TrimSpace(w.text.String())
	switch w.status {
	case http.StatusNotFound:
		code = RPCSessionNotFound
		message = "This MCP session has ended (unused for 24 hours, ended as the one idle longest when a new session needed room, ended by DELETE, or Chopin restarted): initialize again."
	case http.StatusBadRequest:
		code = jsonrpc.CodeInvalidRequest
	}
	writeRPCError(w.ResponseWriter, w.status, w.id, code, message, nil)
}
