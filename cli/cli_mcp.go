package cli

// `chopin mcp`: the local agent MCP tools over stdio, for clients that only
// launch a command (Claude Desktop and others). It forwards each
// newline-delimited JSON-RPC message from stdin to the running Chopin's
// /mcp with this computer's agent token, and writes each answer to stdout
// on a line of its own. When no Chopin runs it starts one in this process,
// without a browser, serving until stdin ends. Nothing but MCP goes to
// stdout: a refusal at the HTTP level (413, 401, Chopin gone) becomes a
// JSON-RPC error for the request's id, and logs go to stderr (docs/mcp.md,
// "chopin mcp").

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/instance"
)

const mcpUsage = `Usage: chopin mcp [flags]

Serves Chopin's local agent MCP tools over stdin and stdout, for MCP clients
that launch a command (Claude Desktop, and others that take a "command").
It forwards to the running Chopin's /mcp with this computer's agent token;
when Chopin is not running, it starts it without a browser and serves it
until the client closes stdin. Logs go to stderr. docs/mcp.md has each
client's set-up.
`

// maxStdioMessage bounds one message read from stdin; /mcp takes at most
// 4 MiB.
const maxStdioMessage = 8 << 20

func setupMCP(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		return c.mcp(ctx, cfg)
	}
}

func (c *CLI) mcp(ctx context.Context, cfg config.Config) int {
	logger := slog.New(slog.NewTextHandler(c.Stderr, nil))
	origin, stop, err := c.mcpInstance(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin mcp: %v\n", err)
		return exitError
	}
	defer stop()
	stdin := c.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	f := &mcpForwarder{endpoint: origin + "/mcp", configDir: cfg.ConfigDir, log: logger, out: c.Stdout,
		client: &http.Client{Transport: &http.Transport{Proxy: nil}}, // loopback: never through a proxy
		relocate: func(ctx context.Context) (string, error) {
			rec, err := waitForOrigin(ctx, cfg.DataDir)
			if err != nil {
				return "", err
			}
			return loopbackOrigin(rec)
		}}
	if err := f.run(ctx, stdin); err != nil {
		fmt.Fprintf(c.Stderr, "chopin mcp: %v\n", err)
		return exitError
	}
	return exitOK
}

// mcpInstance finds the running Chopin, or starts one here; stop ends the
// one started here.
func (c *CLI) mcpInstance(ctx context.Context, cfg config.Config, logger *slog.Logger) (origin string, stop func(), err error) {
	origin, stop, err = c.serveHere(ctx, cfg, logger)
	if errors.Is(err, instance.ErrAlreadyRunning) {
		rec, err := waitForOrigin(ctx, cfg.DataDir)
		if err != nil {
			return "", nil, err
		}
		origin, err := loopbackOrigin(rec)
		if err != nil {
			return "", nil, err
		}
		logger.Info("forwarding to the running Chopin", "origin", origin)
		return origin, func() {}, nil
	}
	if err != nil {
		return "", nil, err
	}
	logger.Info("started Chopin for this MCP client; it serves until the client disconnects", "origin", origin)
	return origin, stop, nil
}

// mcpForwarder carries messages between stdio and /mcp, one at a time.
type mcpForwarder struct {
	// Set at construction.
	endpoint, configDir string
	log                 *slog.Logger
	out                 io.Writer
	client              *http.Client
	// relocate finds the running Chopin again after it stopped answering
	// (it restarted, perhaps on another port).
	relocate func(ctx context.Context) (string, error)

	// Owned by run.
	session, protocol string
	initialize        []byte // the client's initialize, to open a new session after a restart
}

func (f *mcpForwarder) run(ctx context.Context, stdin io.Reader) error {
	in := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, tooLong, err := readMessage(in, maxStdioMessage)
		switch line = bytes.TrimSpace(line); {
		case tooLong:
			f.tooLong(line)
		case len(line) > 0:
			f.forward(ctx, bytes.Clone(line))
		}
		if err == io.EOF {
			f.endSession()
			return nil
		}
		if err != nil {
			f.endSession()
			return err
		}
	}
}

// readMessage reads one line of at most max bytes. A longer one is read to
// its end and dropped: tooLong, with its first bytes as line.
func readMessage(in *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong = true
				line = append(line, chunk[:min(len(chunk), 64<<10)]...)
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

// tooLong answers a message too long to send with an error for its id,
// when its first bytes give one.
func (f *mcpForwarder) tooLong(start []byte) {
	f.log.Error("a message on stdin is too long; it was not sent to Chopin", "max_bytes", maxStdioMessage)
	f.fail(leadingID(start), jsonrpcInvalidRequest,
		fmt.Sprintf("The message is over %d bytes, more than chopin mcp reads (Chopin's /mcp takes at most 4 MiB); it was not sent.", maxStdioMessage))
}

// rpcMessage is what the forwarder reads of a message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  *struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// requestID is the id of a request, or nil for a notification, a response
// or a message that is not JSON-RPC.
func (m rpcMessage) requestID() json.RawMessage {
	if m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil
	}
	return m.ID
}

// JSON-RPC error codes the forwarder answers with.
const (
	jsonrpcInvalidRequest = -32600
	// jsonrpcRefused: Chopin refused or did not answer the request.
	jsonrpcRefused = -32000
)

// forward sends one message and writes what comes back.
func (f *mcpForwarder) forward(ctx context.Context, msg []byte) {
	var m rpcMessage
	json.Unmarshal(msg, &m) // a malformed one goes on: /mcp answers it
	if m.Method == "initialize" {
		f.initialize, f.session, f.protocol = msg, "", ""
	}
	status, header, body, err := f.post(ctx, msg)
	if err != nil && f.relocate != nil {
		// Chopin is not where it was: it may have restarted elsewhere.
		if origin, rerr := f.relocate(ctx); rerr == nil && origin+"/mcp" != f.endpoint {
			f.log.Info("Chopin moved; forwarding to it there", "origin", origin)
			f.endpoint = origin + "/mcp"
			status, header, body, err = f.post(ctx, msg)
		}
	}
	if err == nil && status == http.StatusNotFound && f.session != "" && m.Method != "initialize" && f.initialize != nil {
		// Chopin restarted and forgot the session: open a new one as the
		// client did, then send the message again.
		f.log.Info("the MCP session ended; opening a new one")
		if f.reopen(ctx) {
			status, header, body, err = f.post(ctx, msg)
		}
	}
	if err != nil {
		f.log.Error("forward to Chopin", "err", err)
		f.fail(m.requestID(), jsonrpcRefused, "Chopin is not answering at "+f.endpoint+": is it still running? Start it with `chopin` and try again.")
		return
	}
	if s := header.Get("Mcp-Session-Id"); s != "" {
		f.session = s
	}
	switch {
	case status == http.StatusAccepted:
	case isEventStream(header):
		f.writeEvents(body)
	default:
		f.answer(m, status, body)
	}
}

// answer writes what /mcp answered to m. A JSON-RPC response with an id
// goes to stdout as it is; anything else is a refusal at the HTTP level
// (413, 401, a Chopin too old to answer in JSON-RPC, ...), which becomes
// a JSON-RPC error for m's id, or, for a notification, a line on stderr.
func (f *mcpForwarder) answer(m rpcMessage, status int, body []byte) {
	var a rpcMessage
	isRPC := json.Unmarshal(body, &a) == nil && a.JSONRPC == "2.0"
	if isRPC && a.Result != nil && a.Result.ProtocolVersion != "" && m.Method == "initialize" {
		f.protocol = a.Result.ProtocolVersion
	}
	if isRPC && (a.Method != "" || len(a.ID) > 0 && string(a.ID) != "null" && (a.Result != nil || a.Error != nil)) {
		f.write(body)
		return
	}
	code, message := int64(jsonrpcRefused), refusalText(status, body)
	if isRPC && a.Error != nil {
		code, message = a.Error.Code, a.Error.Message
	}
	if status == http.StatusUnauthorized {
		message = "Chopin did not accept the agent token in " + f.configDir + "; is it using another config directory (CHOPIN_CONFIG_DIR)?"
	}
	f.log.Warn("Chopin refused a message", "status", status, "method", m.Method, "message", message)
	switch id := m.requestID(); {
	case id != nil:
		f.fail(id, code, message)
	case m.JSONRPC == "" && isRPC && a.Error != nil:
		// The client's line was not JSON-RPC at all: JSON-RPC answers
		// that with an error whose id is null.
		f.write(body)
	}
}

// refusalText is the message of an answer that is not JSON-RPC: the HTTP
// API's {code, message}, else the text itself.
func refusalText(status int, body []byte) string {
	var e struct{ Message string }
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return e.Message
	}
	text := strings.ToValidUTF8(strings.TrimSpace(string(body)), "?")
	if len(text) > 500 {
		text = strings.ToValidUTF8(text[:500], "") + "..."
	}
	if text == "" {
		return fmt.Sprintf("Chopin answered %d %s.", status, http.StatusText(status))
	}
	return fmt.Sprintf("Chopin answered %d: %s", status, text)
}

// post sends msg to /mcp with the agent token, read fresh each time so a
// rotation applies at once.
func (f *mcpForwarder) post(ctx context.Context, msg []byte) (int, http.Header, []byte, error) {
	token, err := instance.ReadAgentToken(f.configDir)
	if err != nil {
		return 0, nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.endpoint, bytes.NewReader(msg))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if f.session != "" {
		req.Header.Set("Mcp-Session-Id", f.session)
	}
	if f.protocol != "" {
		req.Header.Set("Mcp-Protocol-Version", f.protocol)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStdioMessage))
	return resp.StatusCode, resp.Header, body, err
}

// reopen opens a new session with the client's initialize and initialized.
func (f *mcpForwarder) reopen(ctx context.Context) bool {
	f.session = ""
	status, header, _, err := f.post(ctx, f.initialize)
	if err != nil || status != http.StatusOK || header.Get("Mcp-Session-Id") == "" {
		return false
	}
	f.session = header.Get("Mcp-Session-Id")
	f.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return true
}

// endSession tells Chopin the client has gone.
func (f *mcpForwarder) endSession() {
	if f.session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, f.endpoint, nil)
	if token, err := instance.ReadAgentToken(f.configDir); err == nil {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Mcp-Session-Id", f.session)
	if resp, err := f.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// writeEvents writes each JSON-RPC message of an event stream.
func (f *mcpForwarder) writeEvents(body []byte) {
	var data []byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		case len(line) == 0 && len(data) > 0:
			f.write(data)
			data = nil
		}
	}
	if len(data) > 0 {
		f.write(data)
	}
}

// write writes one JSON-RPC message on a line of its own; anything else
// goes to stderr, never to stdout.
func (f *mcpForwarder) write(msg []byte) {
	var m rpcMessage
	var b bytes.Buffer
	if json.Unmarshal(msg, &m) != nil || m.JSONRPC != "2.0" || json.Compact(&b, msg) != nil {
		f.log.Warn("Chopin sent something that is not a JSON-RPC message; it was not passed on", "bytes", len(msg))
		return
	}
	b.WriteByte('\n')
	f.out.Write(b.Bytes())
}

// fail answers a request with a JSON-RPC error; a notification (id nil)
// gets nothing.
func (f *mcpForwarder) fail(id json.RawMessage, code int64, message string) {
	if len(id) == 0 || string(id) == "null" {
		return
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	f.write(out)
}

// leadingID is the id of the JSON-RPC request that msg holds or begins
// (a message cut short keeps an id that came before the cut), or nil.
func leadingID(msg []byte) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(msg))
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
			if t := bytes.TrimSpace(v); len(t) > 0 && (t[0] == '"' || t[0] == '-' || t[0] >= '0' && t[0] <= '9') {
				return v
			}
			return nil
		}
	}
	return nil
}
