package acp

// Chopin's host tools as an MCP server for the agent (the official Go MCP
// SDK): over streamable HTTP on a loopback port of the bridge, behind a
// secret of the ACP session the agent presents as a bearer, and offered
// either as an HTTP entry of session/new's mcpServers or, for an agent
// without mcpCapabilities.http, as a stdio entry running the chopin binary's
// hidden acp-mcp subcommand, which forwards to the same server (stdio.go).
// The server lists the host tools of the latest turn by their bare names;
// a call becomes a host-tool-call of the running turn.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// The variables the stdio entry carries to the hidden subcommand.
const (
	EnvMCPURL    = "CHOPIN_ACP_MCP_URL"
	EnvMCPSecret = "CHOPIN_ACP_MCP_SECRET"
)

// maxMCPBody bounds a request the agent sends the MCP server.
const maxMCPBody = 4 << 20

// mcpEndpoint is one document's MCP server.
type mcpEndpoint struct {
	// set at construction
	server *mcp.Server
	http   *http.Server
	url    string

	mu     sync.Mutex        // guards secret and names
	secret string            // replaced for each ACP session (rotate)
	names  map[string]string // tool name -> its schema and description, as listed
}

func newMCPEndpoint(version string) (*mcpEndpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the MCP server for the agent could not listen on loopback: %v", err)
	}
	m := &mcpEndpoint{
		server: mcp.NewServer(&mcp.Implementation{Name: mcpServerName, Title: "Chopin", Version: version}, &mcp.ServerOptions{
			Instructions: "Chopin's tools for the document you plan: read and edit the plan, ask the people questions.",
		}),
		url:   "http://" + ln.Addr().String() + "/mcp",
		names: map[string]string{},
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.server }, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: maxMCPBody})
	m.http = &http.Server{
		Handler:           m.guard(handler),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = m.http.Serve(ln) }()
	return m, nil
}

// rotate makes a new secret, for a new ACP session, and returns it: the
// last session's agent can no longer call the tools.
func (m *mcpEndpoint) rotate() string {
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.secret = base64.RawURLEncoding.EncodeToString(buf)
	return m.secret
}

// guard lets through only requests that carry the current secret.
func (m *mcpEndpoint) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		secret := m.secret
		m.mu.Unlock()
		want := []byte("Bearer " + secret)
		if secret == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (m *mcpEndpoint) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = m.http.Shutdown(ctx)
	_ = m.http.Close()
}

// setTools lists tools: a tool no longer offered is removed, a new or
// changed one added.
func (m *mcpEndpoint) setTools(tools []wire.Tool, call func(ctx context.Context, name string, args []byte) *mcp.CallToolResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[string]wire.Tool{}
	for _, t := range tools {
		want[t.Name] = t
	}
	var gone []string
	for name := range m.names {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(m.names, name)
		}
	}
	if len(gone) > 0 {
		m.server.RemoveTools(gone...)
	}
	for _, t := range tools {
		schema := objectSchema(t.InputSchema)
		key := t.Description + "\x00" + string(schema)
		if m.names[t.Name] == key {
			continue
		}
		m.names[t.Name] = key
		name := t.Name
		m.server.AddTool(&mcp.Tool{Name: name, Description: t.Description, InputSchema: schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return call(ctx, name, req.Params.Arguments), nil
			})
	}
}

// objectSchema is a tool's input schema as the MCP SDK takes it: a JSON
// object of type object, else an empty object schema.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil && m["type"] == "object" {
		return raw
	}
	return json.RawMessage(`{"type":"object"}`)
}

// setTools keeps the MCP server's list to the latest turn's host tools.
func (d *document) setTools(tools []wire.Tool) {
	d.mu.Lock()
	d.tools = tools
	m := d.mcp
	d.mu.Unlock()
	if m != nil {
		m.setTools(tools, d.callHostTool)
	}
}

// mcpServers is the mcpServers entry of session/new for p: HTTP when the
// agent takes it, else stdio through the chopin binary.
func (d *document) mcpServers(p *process) ([]sdk.McpServer, error) {
	d.mu.Lock()
	m, tools := d.mcp, d.tools
	d.mu.Unlock()
	if m == nil {
		var err error
		if m, err = newMCPEndpoint(d.b.cfg.Version); err != nil {
			return nil, err
		}
		d.mu.Lock()
		d.mcp = m
		d.mu.Unlock()
		m.setTools(tools, d.callHostTool)
	}
	secret := m.rotate()
	if p.init.AgentCapabilities.McpCapabilities.Http {
		return []sdk.McpServer{{Http: &sdk.McpServerHttpInline{Name: mcpServerName, Type: "http", Url: m.url,
			Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer " + secret}}}}}, nil
	}
	stdio := d.b.cfg.MCPStdio
	if len(stdio) == 0 {
		return nil, errors.New("The agent cannot reach an MCP server over HTTP, and this bridge has no command for the stdio entry.")
	}
	return []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: mcpServerName, Command: stdio[0], Args: append([]string{}, stdio[1:]...),
		Env: []sdk.EnvVariable{{Name: EnvMCPURL, Value: m.url}, {Name: EnvMCPSecret, Value: secret}}}}}, nil
}

// callHostTool runs a host tool the agent called in the running turn; its
// result is the tool's text, JSON as text, isError kept.
func (d *document) callHostTool(ctx context.Context, name string, args []byte) *mcp.CallToolResult {
	d.mu.Lock()
	st := d.turn
	d.mu.Unlock()
	if st == nil {
		return textResult("Chopin's tools work only while the Planner answers a turn.", true)
	}
	if len(args) == 0 || string(args) == "null" {
		args = []byte(`{}`)
	}
	out, err := st.t.CallTool(ctx, name, json.RawMessage(args))
	var failed *client.ToolResultError
	switch {
	case errors.As(err, &failed):
		return textResult(string(failed.Output), true)
	case err != nil:
		return textResult(err.Error(), true)
	}
	var text string
	if json.Unmarshal(out, &text) == nil {
		return textResult(text, false)
	}
	return textResult(string(out), false)
}

func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

func jsonOf(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	return json.Marshal(v)
}
