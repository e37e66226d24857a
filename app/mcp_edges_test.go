package app

// /mcp's edges, over real HTTP: every refusal is a JSON-RPC error object
// (never plain text, never Chopin's {code, message}, never code 0), the
// body limit is exactly the 4 MiB docs/mcp.md gives, and live sessions are
// capped, the oldest idle one going first.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/mcpserver"
)

// rpcReply is a JSON-RPC response as /mcp sends it.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// wantRPCError fails unless r is a JSON-RPC 2.0 error response with the
// status, code and id (id "" is JSON null or absent).
func wantRPCError(t *testing.T, what string, r apptest.Response, status int, code int64, id string) {
	t.Helper()
	var m rpcReply
	if err := json.Unmarshal(r.Body, &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil {
		t.Errorf("%s: %d %q %s: not a JSON-RPC error", what, r.Status, r.Header.Get("Content-Type"), r.Body)
		return
	}
	gotID := string(m.ID)
	if gotID == "null" {
		gotID = ""
	}
	if r.Status != status || m.Error.Code != code || gotID != id || m.Error.Message == "" ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s: %d code %d id %s %q, want %d code %d id %q", what, r.Status, m.Error.Code, m.ID, m.Error.Message, status, code, id)
	}
}

// mcpRaw sends a request to /mcp with a JSON body's headers, changed by
// header (an empty value removes one).
func (ta *testApp) mcpRaw(method, body string, header map[string]string) apptest.Response {
	ta.T.Helper()
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for k, v := range header {
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	req, _ := http.NewRequest(method, ta.URL()+"/mcp", strings.NewReader(body))
	for k, v := range h {
		req.Header.Set(k, v)
	}
	return roundTrip(ta.T, req)
}

func roundTrip(t testing.TB, req *http.Request) apptest.Response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return apptest.Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// padded is a ping request of exactly n bytes (JSON whitespace pads it).
func padded(id, n int) string {
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)
	return msg + strings.Repeat(" ", n-len(msg))
}

func TestMCPRefusalsAreJSONRPCErrors(t *testing.T) {
	ta := startApp(t)
	auth := "Bearer " + ta.Token()
	init := ta.mcpRaw("POST", initializeBody, map[string]string{"Authorization": auth})
	if init.Status != 200 {
		t.Fatalf("initialize: %d %s", init.Status, init.Body)
	}
	session := map[string]string{"Authorization": auth, "Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	ta.mcpRaw("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)

	// The limit is 4 MiB, 4,194,304 bytes, as docs/mcp.md says.
	if mcpserver.MaxBody != 4<<20 || !strings.Contains(readDoc(t, "mcp.md"), "4 MiB (4,194,304 bytes)") {
		t.Errorf("the limit is %d; docs/mcp.md must give 4 MiB (4,194,304 bytes)", mcpserver.MaxBody)
	}
	for _, n := range []int{4_000_001, 4 << 20} {
		if r := ta.mcpRaw("POST", padded(9, n), session); r.Status != 200 {
			t.Errorf("a ping of %d bytes: %d %s", n, r.Status, r.Body)
		}
	}
	wantRPCError(t, "a body of 4 MiB and a byte", ta.mcpRaw("POST", padded(9, 4<<20+1), session), 413, jsonrpc.CodeInvalidRequest, "9")

	for _, c := range []struct {
		what, body string
		header     map[string]string
		status     int
		code       int64
		id         string
	}{
		{"not JSON", `{not json`, session, 400, jsonrpc.CodeParseError, ""},
		{"an id out of range", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, session, 400, jsonrpc.CodeInvalidRequest, ""},
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, session, 400, jsonrpc.CodeInvalidRequest, ""},
		{"an id past 2^53", `{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}`, session, 400, jsonrpc.CodeInvalidRequest, ""},
		{"a null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, session, 400, jsonrpc.CodeInvalidRequest, ""},
		{"a response without id", `{"jsonrpc":"2.0","result":{}}`, session, 400, jsonrpc.CodeInvalidRequest, ""},
		{"an error without id", `{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}`, session, 400, jsonrpc.CodeInvalidRequest, ""},
		{"tools/list without a session", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, map[string]string{"Authorization": auth}, 400, jsonrpc.CodeInvalidRequest, "5"},
		{"ping without a session", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, map[string]string{"Authorization": auth}, 400, jsonrpc.CodeInvalidRequest, `"p"`},
		{"an unknown session", `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": "no-such-session"}, 404, mcpserver.RPCSessionNotFound, "6"},
		{"no token", initializeBody, nil, 401, mcpserver.RPCRefused, "1"},
		{"a wrong token", initializeBody, map[string]string{"Authorization": "Bearer chopin_a_wrong"}, 401, mcpserver.RPCRefused, "1"},
		{"a foreign Origin", initializeBody, map[string]string{"Authorization": auth, "Origin": "http://127.0.0.1:1"}, 403, mcpserver.RPCRefused, "1"},
		{"text/plain", initializeBody, map[string]string{"Authorization": auth, "Content-Type": "text/plain"}, 415, mcpserver.RPCRefused, "1"},
		{"no Accept", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": session["Mcp-Session-Id"], "Accept": "text/html"}, 400, jsonrpc.CodeInvalidRequest, "8"},
		{"an unknown protocol version", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": session["Mcp-Session-Id"], "Mcp-Protocol-Version": "1999-01-01"}, 400, jsonrpc.CodeInvalidRequest, "8"},
	} {
		wantRPCError(t, c.what, ta.mcpRaw("POST", c.body, c.header), c.status, c.code, c.id)
	}
	for _, method := range []string{"GET", "PUT"} {
		r := ta.mcpRaw(method, "", session)
		wantRPCError(t, method, r, 405, mcpserver.RPCRefused, "")
		if r.Header.Get("Allow") != "POST, DELETE" {
			t.Errorf("%s: Allow %q", method, r.Header.Get("Allow"))
		}
	}
	if r := ta.mcpRaw("POST", initializeBody, nil); r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("401 without WWW-Authenticate")
	}
	wantRPCError(t, "DELETE without a session", ta.mcpRaw("DELETE", "", map[string]string{"Authorization": auth}), 400, jsonrpc.CodeInvalidRequest, "")

	// A wrong Host is refused as on every route, and as JSON-RPC here.
	req, _ := http.NewRequest("POST", ta.URL()+"/mcp", strings.NewReader(initializeBody))
	req.Host = "evil.example:80"
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	wantRPCError(t, "a wrong Host", roundTrip(t, req), 403, mcpserver.RPCRefused, "1")

	// The session still works after all that.
	if r := ta.mcpRaw("POST", `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, session); r.Status != 200 || !strings.Contains(string(r.Body), "list_repositories") {
		t.Errorf("tools/list: %d %s", r.Status, r.Body)
	}
}

// Past the cap, a new session ends the one idle longest; a session in use
// stays.
func TestMCPSessionCap(t *testing.T) {
	ta := startApp(t)
	auth := "Bearer " + ta.Token()
	open := func() string {
		t.Helper()
		r := ta.mcpRaw("POST", initializeBody, map[string]string{"Authorization": auth})
		if r.Status != 200 || r.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d %s", r.Status, r.Body)
		}
		id := r.Header.Get("Mcp-Session-Id")
		ta.mcpRaw("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
		return id
	}
	ping := func(id string) apptest.Response {
		return ta.mcpRaw("POST", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
	}
	var ids []string
	for range mcpserver.SessionCap {
		ids = append(ids, open())
	}
	// The first is used now: the second is the one idle longest.
	if r := ping(ids[0]); r.Status != 200 {
		t.Fatalf("ping the first: %d %s", r.Status, r.Body)
	}
	ids = append(ids, open(), open())
	wantRPCError(t, "the second session, idle longest", ping(ids[1]), 404, mcpserver.RPCSessionNotFound, "1")
	wantRPCError(t, "the third session, idle next longest", ping(ids[2]), 404, mcpserver.RPCSessionNotFound, "1")
	for _, i := range []int{0, 3, len(ids) - 1} {
		if r := ping(ids[i]); r.Status != 200 {
			t.Errorf("session %d after the cap: %d %s", i, r.Status, r.Body)
		}
	}
}

// readDoc is a page of docs/.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// `chopin mcp` writes nothing but JSON-RPC messages to stdout: a refusal
// at the HTTP level (a body over 4 MiB) becomes an error for the pending
// request's id, a notification's refusal goes to stderr only, and a line
// too long to read is answered by its id and does not end the command.
func TestMCPCommandAnswersEveryRequestInJSONRPC(t *testing.T) {
	dir := t.TempDir()
	startAppWith(t, testConfig(t, dir))
	env := apptest.Env(dir)
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	stderr := &apptest.Buffer{}
	c := &cli.CLI{Local: Local{}, Stdin: stdinR, Stdout: stdoutW, Stderr: stderr, Getenv: func(k string) string { return env[k] }}
	done := make(chan int, 1)
	go func() {
		code := c.Run(context.Background(), []string{"mcp"})
		stdoutW.Close()
		done <- code
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdoutR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	toStdin := make(chan string, 16)
	go func() {
		for msg := range toStdin {
			io.WriteString(stdinW, msg+"\n")
		}
		stdinW.Close()
	}()
	send := func(msg string) { toStdin <- msg }
	next := func(what string) rpcReply {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("%s: stdout closed\n%s", what, stderr)
			}
			var m rpcReply
			if err := json.Unmarshal([]byte(line), &m); err != nil || m.JSONRPC != "2.0" || len(m.ID) == 0 || string(m.ID) == "null" || (m.Error == nil) == (m.Result == nil) {
				t.Fatalf("%s: stdout has a line that is not a JSON-RPC response: %.300s", what, line)
			}
			return m
		case <-time.After(apptest.Wait):
			t.Fatalf("%s: no answer\n%s", what, stderr)
		}
		return rpcReply{}
	}
	send(initializeBody)
	if m := next("initialize"); string(m.ID) != "1" || m.Error != nil {
		t.Fatalf("initialize: %+v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	big := strings.Repeat("a", 4<<20)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_repositories","arguments":{"x":"` + big + `"}}}`)
	if m := next("a request over 4 MiB"); string(m.ID) != "7" || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(m.Error.Message, "4 MiB") {
		t.Errorf("a request over 4 MiB: %s %+v", m.ID, m.Error)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"` + big + `"}}`)
	send(`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"x","arguments":{"x":"` + strings.Repeat(big, 3) + `"}}}`)
	if m := next("a line over 8 MiB"); string(m.ID) != `"long"` || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("a line over 8 MiB: %s %+v", m.ID, m.Error)
	}
	send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if m := next("ping"); string(m.ID) != "9" || m.Error != nil {
		t.Errorf("ping after the refusals: %s %+v", m.ID, m.Error)
	}
	close(toStdin)
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	case <-time.After(apptest.Wait):
		t.Fatalf("chopin mcp did not exit\n%s", stderr)
	}
	for line := range lines {
		t.Errorf("stdout after the last answer: %.300s", line)
	}
	if !strings.Contains(stderr.String(), "Chopin refused a message") || !strings.Contains(stderr.String(), "notifications/cancelled") {
		t.Errorf("stderr does not tell of the refused notification:\n%s", stderr)
	}
}
