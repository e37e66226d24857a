package acp

// The stdio entry's side: what `chopin acp-mcp` (hidden) runs when an agent
// that cannot reach an MCP server over HTTP starts it. It connects back to
// the bridge's MCP server (EnvMCPURL, with EnvMCPSecret as the bearer) and
// serves the same tools on its own stdin and stdout, following the
// bridge's list as it changes from turn to turn.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// bearerTransport adds the secret to every request to the bridge.
type bearerTransport struct{ secret string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// ServeStdio forwards MCP over stdio (the process's stdin and stdout) to
// the bridge's MCP server at url until the agent closes stdin or ctx ends;
// version is this build's, for serverInfo and clientInfo.
func ServeStdio(ctx context.Context, url, secret, version string) error {
	if url == "" || secret == "" {
		return errors.New("this command is started by chopin planner --acp for its agent, with " + EnvMCPURL + " and " + EnvMCPSecret + " set; it is not for people")
	}
	local := mcp.NewServer(&mcp.Implementation{Name: mcpServerName, Title: "Chopin", Version: version}, nil)
	listed := &mcpEndpoint{server: local, names: map[string]string{}}
	var remote *mcp.ClientSession
	sync := func(ctx context.Context) {
		var tools []wire.Tool
		for t, err := range remote.Tools(ctx, nil) {
			if err != nil {
				return
			}
			schema, _ := jsonOf(t.InputSchema)
			tools = append(tools, wire.Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
		}
		listed.setTools(tools, func(ctx context.Context, name string, args []byte) *mcp.CallToolResult {
			r, err := remote.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
			if err != nil {
				return textResult(err.Error(), true)
			}
			return r
		})
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "chopin-acp-mcp", Version: version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) { sync(ctx) },
	})
	var err error
	remote, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{secret}}}, nil)
	if err != nil {
		return err
	}
	defer remote.Close()
	sync(ctx)
	return local.Run(ctx, &mcp.StdioTransport{})
}
