package app

// /mcp through the official Go SDK's client against the real app: every
// tool's success and refusals, strict arguments, the transport's errors,
// auth and Origin, a replay across a restart, a live tab receiving an
// update_document, and invoke_planner reaching an attached Planner.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/version"
)

// bearerTransport adds the agent token to every request.
type bearerTransport struct{ token func() string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token())
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the SDK's client to the app's /mcp as name.
func (ta *testApp) mcpSession(name string) *mcp.ClientSession {
	ta.T.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: ta.URL() + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{ta.Token}}}
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		ta.T.Fatalf("connect: %v", err)
	}
	ta.T.Cleanup(func() { cs.Close() })
	return cs
}

// toolOut is a tool result: its structuredContent, whether it is a refusal,
// and its text.
type toolOut struct {
	t       testing.TB
	IsError bool
	Data    map[string]any
	Text    string
}

func (o toolOut) str(key string) string {
	s, _ := o.Data[key].(string)
	return s
}

func (o toolOut) num(key string) int64 {
	f, _ := o.Data[key].(float64)
	return int64(f)
}

// call calls a tool and fails on a protocol error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) toolOut {
	t.Helper()
	res, err := callToolErr(cs, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func callToolErr(cs *mcp.ClientSession, name string, args any) (toolOut, error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return toolOut{}, err
	}
	out := toolOut{IsError: res.IsError}
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out.Data)
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			out.Text = tc.Text
		}
	}
	return out, nil
}

// ok fails unless the call succeeded, with the same JSON as text.
func wantOK(t testing.TB, o toolOut, name string) {
	t.Helper()
	if o.IsError {
		t.Fatalf("%s refused: %v", name, o.Data)
	}
}

// wantRefusal fails unless the call was refused with code, with a text a
// model can read.
func wantRefusal(t testing.TB, o toolOut, code string) {
	t.Helper()
	if !o.IsError || o.str("code") != code || o.str("message") == "" || !strings.Contains(o.Text, o.str("message")) {
		t.Fatalf("got %+v, want the refusal %s", o, code)
	}
}

// wantInvalidParams fails unless the call was a JSON-RPC -32602.
func wantInvalidParams(t testing.TB, cs *mcp.ClientSession, name string, args any) {
	t.Helper()
	_, err := callToolErr(cs, name, args)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("%s %v: got %v, want -32602", name, args, err)
	}
}

func TestMCPInitializeAndTools(t *testing.T) {
	ta := startApp(t)
	cs := ta.mcpSession("test-client")
	init := cs.InitializeResult()
	// The version is chopin --version's, also on a build no release set.
	if init.ServerInfo.Name != "chopin" || init.ServerInfo.Version == "" || init.ServerInfo.Version != version.Build().Version || init.Capabilities.Tools == nil {
		t.Fatalf("initialize: %+v", init)
	}
	for _, tool := range []string{"create_document", "update_document", "rename_document", "archive_document",
		"restore_document", "invoke_planner", "upload_image"} {
		if !strings.Contains(init.Instructions, "\n- "+tool+": ") {
			t.Fatalf("instructions do not list %s:\n%s", tool, init.Instructions)
		}
	}
	if !strings.Contains(init.Instructions, "Each tool's description is the contract") {
		t.Fatalf("instructions do not say the descriptions are the contract:\n%s", init.Instructions)
	}
	for _, tool := range []string{"list_repositories", "list_documents", "read_document"} {
		if strings.Contains(init.Instructions, "- "+tool+": ") {
			t.Fatalf("instructions list the reading tool %s as one that changes something", tool)
		}
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		raw, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(raw), `"additionalProperties":false`) {
			t.Errorf("%s's schema admits unknown keys: %s", tl.Name, raw)
		}
		if tl.Description == "" {
			t.Errorf("%s has no description", tl.Name)
		}
	}
	slices.Sort(names)
	want := "archive_document create_document invoke_planner list_documents list_repositories list_versions read_document rename_document restore_document update_document upload_image"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tools: %s", got)
	}
	if _, err := callToolErr(cs, "delete_document", map[string]any{"id": "x"}); err == nil {
		t.Fatal("delete_document exists")
	}
	var we *jsonrpc.Error
	if _, err := callToolErr(cs, "no_such_tool", map[string]any{}); !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown tool: %v", err)
	}
}

func TestMCPDocumentLifecycle(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("acme/rocket")
	cs := ta.mcpSession("claude-code")

	repos := callTool(t, cs, "list_repositories", map[string]any{})
	wantOK(t, repos, "list_repositories")
	if !strings.Contains(repos.Text, `"name":"acme/rocket"`) {
		t.Fatalf("list_repositories: %s", repos.Text)
	}

	create := map[string]any{"idempotencyKey": "k1", "repository": "acme/rocket", "title": "Launch plan",
		"plan": "# Launch plan\n\nShip it.\n", "brief": "Plan the launch."}
	made := callTool(t, cs, "create_document", create)
	wantOK(t, made, "create_document")
	id := made.str("id")
	if made.Data["replayed"] != false || made.num("revision") != 0 || made.str("url") != ta.URL()+"/documents/acme/rocket/launch-plan" {
		t.Fatalf("create_document: %v", made.Data)
	}
	var same map[string]any
	json.Unmarshal([]byte(made.Text), &same)
	if fmt.Sprint(same) != fmt.Sprint(made.Data) {
		t.Fatalf("text %s is not the structuredContent %v", made.Text, made.Data)
	}
	again := callTool(t, cs, "create_document", create)
	if again.str("id") != id || again.Data["replayed"] != true {
		t.Fatalf("replay: %v", again.Data)
	}
	create["plan"] = "# Other\n"
	wantRefusal(t, callTool(t, cs, "create_document", create), "idempotency-conflict")
	create["idempotencyKey"] = "k2"
	wantRefusal(t, callTool(t, cs, "create_document", create), "title-taken")
	create["title"], create["plan"] = "Forged", "# Forged\n\n<Decision id=\"d1\" />\n"
	wantRefusal(t, callTool(t, cs, "create_document", create), "protected-projection")
	create["repository"], create["plan"] = "acme/nothing", "# Forged\n"
	wantRefusal(t, callTool(t, cs, "create_document", create), "repository-not-found")
	wantInvalidParams(t, cs, "create_document", map[string]any{"idempotencyKey": strings.Repeat("k", 129), "repository": "acme/rocket", "title": "T", "plan": "# T\n"})
	wantInvalidParams(t, cs, "create_document", map[string]any{"idempotencyKey": "k3", "repository": "acme/rocket", "title": "T", "plan": "# T\n", "extra": 1})
	wantInvalidParams(t, cs, "create_document", map[string]any{"idempotencyKey": "k3", "repository": "acme/rocket", "title": "T"})
	wantInvalidParams(t, cs, "read_document", map[string]any{"id": id, "offset": "1"})

	// The document as the browser sees it: the plan as created.
	var plan struct {
		Revision int64
		Source   string
	}
	ta.Do("GET", "/api/channels/"+id+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Launch plan\n\nShip it.\n" || plan.Revision != 0 {
		t.Fatalf("plan: %+v", plan)
	}

	// Every locator form reaches it.
	for _, loc := range []string{id, strings.ToUpper(id), "/documents/acme/rocket/launch-plan", ta.URL() + "/documents/acme/rocket/launch-plan"} {
		read := callTool(t, cs, "read_document", map[string]any{"id": loc})
		wantOK(t, read, "read_document "+loc)
		if read.str("id") != id || read.str("brief") != "Plan the launch." || read.num("size") != int64(len(plan.Source)) {
			t.Fatalf("read_document %s: %v", loc, read.Data)
		}
		if !strings.HasSuffix(read.Text, "text:\n"+plan.Source) || !strings.Contains(read.Text, "next: none") {
			t.Fatalf("read_document text:\n%s", read.Text)
		}
	}
	for _, loc := range []string{"/documents/acme/rocket/nothing", "/documents/acme/nothing/launch-plan", "http://example.com/documents/acme/rocket/launch-plan",
		"launch-plan", "00000000-0000-4000-8000-000000000000"} {
		wantRefusal(t, callTool(t, cs, "read_document", map[string]any{"id": loc}), "document-unavailable")
	}
	wantInvalidParams(t, cs, "read_document", map[string]any{"id": " "})
	wantInvalidParams(t, cs, "read_document", map[string]any{"id": strings.Repeat("a", 2049)})

	// update_document: a stale revision, then the right one, then a replay.
	update := map[string]any{"id": id, "revision": 3, "plan": "# Launch plan\n\nShip it on Friday.\n", "idempotencyKey": "u1"}
	stale := callTool(t, cs, "update_document", update)
	wantRefusal(t, stale, "revision-conflict")
	if stale.num("currentRevision") != 0 {
		t.Fatalf("revision-conflict: %v", stale.Data)
	}
	update["idempotencyKey"], update["revision"] = "u2", 0
	upd := callTool(t, cs, "update_document", update)
	wantOK(t, upd, "update_document")
	if upd.num("revision") != 1 || upd.Data["replayed"] != false {
		t.Fatalf("update_document: %v", upd.Data)
	}
	if re := callTool(t, cs, "update_document", update); re.num("revision") != 1 || re.Data["replayed"] != true {
		t.Fatalf("replay: %v", re.Data)
	}
	update["plan"] = "# Something else\n"
	wantRefusal(t, callTool(t, cs, "update_document", update), "idempotency-conflict")
	ta.Do("GET", "/api/channels/"+id+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Launch plan\n\nShip it on Friday.\n" || plan.Revision != 1 {
		t.Fatalf("plan after update: %+v", plan)
	}
	// Chat says who made the change.
	var msgs struct{ Messages []struct{ Role, Text string } }
	ta.Do("GET", "/api/channels/"+id+"/messages", nil).JSON(t, &msgs)
	if n := len(msgs.Messages); n != 1 || !strings.Contains(msgs.Messages[0].Text, "claude-code replaced the plan") {
		t.Fatalf("Chat: %+v", msgs.Messages)
	}

	// rename, archive, restore: idempotent; a former slug still reaches it.
	ren := callTool(t, cs, "rename_document", map[string]any{"id": id, "title": "Liftoff plan"})
	if ren.str("title") != "Liftoff plan" || !strings.HasSuffix(ren.str("url"), "/documents/acme/rocket/liftoff-plan") {
		t.Fatalf("rename: %v", ren.Data)
	}
	wantOK(t, callTool(t, cs, "rename_document", map[string]any{"id": id, "title": "Liftoff plan"}), "rename again")
	if r := callTool(t, cs, "read_document", map[string]any{"id": "/documents/acme/rocket/launch-plan"}); r.str("title") != "Liftoff plan" {
		t.Fatalf("former slug: %v", r.Data)
	}
	arch := callTool(t, cs, "archive_document", map[string]any{"id": id})
	if arch.str("archivedAt") == "" {
		t.Fatalf("archive: %v", arch.Data)
	}
	if again := callTool(t, cs, "archive_document", map[string]any{"id": id}); again.str("archivedAt") != arch.str("archivedAt") {
		t.Fatalf("archive again: %v", again.Data)
	}
	list := callTool(t, cs, "list_documents", map[string]any{"repository": "acme/rocket"})
	if docs := list.Data["documents"].([]any); len(docs) != 0 || list.Data["nextCursor"] != nil {
		t.Fatalf("listing without archived: %v", list.Data)
	}
	list = callTool(t, cs, "list_documents", map[string]any{"repository": "acme/rocket", "includeArchived": true, "query": "liftoff"})
	if docs := list.Data["documents"].([]any); len(docs) != 1 {
		t.Fatalf("listing with archived: %v", list.Data)
	}
	wantRefusal(t, callTool(t, cs, "list_documents", map[string]any{"repository": "acme/none"}), "repository-not-found")
	wantRefusal(t, callTool(t, cs, "list_documents", map[string]any{"repository": "acme/rocket", "cursor": "nonsense"}), "invalid-cursor")
	if r := callTool(t, cs, "read_document", map[string]any{"id": id}); r.IsError || r.str("archivedAt") == "" {
		t.Fatalf("reading an archived document: %v", r.Data)
	}
	update["idempotencyKey"], update["revision"] = "u3", 1
	wantRefusal(t, callTool(t, cs, "update_document", update), "document-archived")
	wantRefusal(t, callTool(t, cs, "rename_document", map[string]any{"id": id, "title": "Other"}), "document-archived")
	wantRefusal(t, callTool(t, cs, "invoke_planner", map[string]any{"id": id, "instruction": "Go"}), "document-archived")
	rest := callTool(t, cs, "restore_document", map[string]any{"id": id})
	if _, has := rest.Data["archivedAt"]; has || rest.IsError {
		t.Fatalf("restore: %v", rest.Data)
	}
	wantOK(t, callTool(t, cs, "restore_document", map[string]any{"id": id}), "restore again")

	// A Decision line cannot be dropped, altered or forged.
	update["plan"] = "# Launch plan\n\n<Decision id=\"d9\" />\n"
	wantRefusal(t, callTool(t, cs, "update_document", update), "protected-projection")
	update["plan"] = "   \n"
	wantRefusal(t, callTool(t, cs, "update_document", update), "empty-document")
}

// TestMCPReadDocumentPaging: a plan over the budget is read to its end by
// following each next:, every character exactly once, as read_plan does.
func TestMCPReadDocumentPaging(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("acme/rocket")
	cs := ta.mcpSession("reader")
	var b strings.Builder
	b.WriteString("# Big\n\n")
	for i := 0; b.Len() < 100_000; i++ {
		fmt.Fprintf(&b, "Paragraph %d: %s\n\n", i, strings.Repeat("words ", 30))
	}
	b.WriteString(strings.Repeat("x", 40_000) + "\n") // a line longer than one result
	source := b.String()
	made := callTool(t, cs, "create_document", map[string]any{"idempotencyKey": "big", "repository": "acme/rocket", "title": "Big", "plan": source})
	wantOK(t, made, "create_document")
	id := made.str("id")

	next := regexp.MustCompile(`(?m)^next: read_document (\{.*\})$`)
	var got strings.Builder
	args := map[string]any{"id": id}
	for pages := 0; ; pages++ {
		if pages > 40 {
			t.Fatal("paging does not end")
		}
		r := callTool(t, cs, "read_document", args)
		wantOK(t, r, "read_document")
		if len(r.Text) > 16000 {
			t.Fatalf("page %d is %d bytes", pages, len(r.Text))
		}
		_, text, _ := strings.Cut(r.Text, "\ntext:\n")
		got.WriteString(text)
		m := next.FindStringSubmatch(r.Text)
		if m == nil {
			if !strings.Contains(r.Text, "next: none") {
				t.Fatalf("no next: line:\n%s", r.Text[:500])
			}
			break
		}
		args = map[string]any{}
		if err := json.Unmarshal([]byte(m[1]), &args); err != nil || args["id"] != id {
			t.Fatalf("next: %s (%v)", m[1], err)
		}
	}
	if got.String() != source {
		t.Fatalf("paging gave %d bytes, want %d", got.Len(), len(source))
	}
}

func TestMCPUploadImage(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("acme/rocket")
	doc := ta.CreateDocument("acme/rocket", "Pictures")
	cs := ta.mcpSession("painter")
	var buf bytes.Buffer
	png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 3, 2)))
	data := base64.StdEncoding.EncodeToString(buf.Bytes())

	up := callTool(t, cs, "upload_image", map[string]any{"id": doc.ID, "data": data, "mimeType": "image/png"})
	wantOK(t, up, "upload_image")
	path := up.str("path")
	if !regexp.MustCompile(`^/images/[0-9a-f]{64}\.png$`).MatchString(path) || up.str("markdown") != "![image]("+path+")" {
		t.Fatalf("upload_image: %v", up.Data)
	}
	if r := ta.Do("GET", path, nil); r.Status != 200 || !bytes.Equal(r.Body, buf.Bytes()) {
		t.Fatalf("GET %s: %d", path, r.Status)
	}
	wantRefusal(t, callTool(t, cs, "upload_image", map[string]any{"id": doc.ID, "data": base64.StdEncoding.EncodeToString([]byte("<svg/>")), "mimeType": "image/svg+xml"}), "unsupported-type")
	wantRefusal(t, callTool(t, cs, "upload_image", map[string]any{"id": doc.ID, "data": data, "mimeType": "image/jpeg"}), "signature-mismatch")
	wantRefusal(t, callTool(t, cs, "upload_image", map[string]any{"id": doc.ID, "data": "not base64!", "mimeType": "image/png"}), "invalid-data")
	big := base64.StdEncoding.EncodeToString(make([]byte, 1<<20+1))
	wantRefusal(t, callTool(t, cs, "upload_image", map[string]any{"id": doc.ID, "data": big, "mimeType": "image/png"}), "too-large")
	wantInvalidParams(t, cs, "upload_image", map[string]any{"id": doc.ID, "data": data, "mimeType": "image/png", "alt": "x"})
}

// mcpPost sends one raw JSON-RPC body to /mcp with the given headers.
func (ta *testApp) mcpPost(body string, header map[string]string) apptest.Response {
	ta.T.Helper()
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for k, v := range header {
		h[k] = v
	}
	return ta.Request(http.DefaultClient, "POST", "/mcp", body, h)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func rpcErrorCode(t testing.TB, r apptest.Response) int64 {
	t.Helper()
	var m struct {
		Error *struct{ Code int64 }
	}
	if err := json.Unmarshal(r.Body, &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %d %s", r.Status, r.Body)
	}
	return m.Error.Code
}

func TestMCPTransportAndAuth(t *testing.T) {
	ta := startApp(t)
	auth := map[string]string{"Authorization": "Bearer " + ta.Token()}

	if r := ta.mcpPost(initializeBody, nil); r.Status != 401 {
		t.Fatalf("no token: %d %s", r.Status, r.Body)
	}
	if r := ta.mcpPost(initializeBody, map[string]string{"Authorization": "Bearer chopin_a_wrong"}); r.Status != 401 {
		t.Fatalf("wrong token: %d", r.Status)
	}
	if r := ta.mcpPost(initializeBody, map[string]string{"Authorization": auth["Authorization"], "Origin": "http://evil.example"}); r.Status != 403 {
		t.Fatalf("foreign Origin: %d", r.Status)
	}
	if r := ta.mcpPost(initializeBody, map[string]string{"Authorization": auth["Authorization"], "Origin": ta.URL()}); r.Status != 200 {
		t.Fatalf("own Origin: %d %s", r.Status, r.Body)
	}
	init := ta.mcpPost(initializeBody, auth)
	if init.Status != 200 || !strings.HasPrefix(init.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("initialize: %d %s %s", init.Status, init.Header, init.Body)
	}
	session := map[string]string{"Authorization": auth["Authorization"], "Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	if r := ta.mcpPost(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); r.Status != 202 || len(r.Body) != 0 {
		t.Fatalf("notification: %d %q", r.Status, r.Body)
	}
	if r := ta.mcpPost(`{"jsonrpc":"2.0","id":2,"method":"no/such"}`, session); rpcErrorCode(t, r) != jsonrpc.CodeMethodNotFound {
		t.Fatalf("unknown method: %s", r.Body)
	}
	if r := ta.mcpPost(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_repositories","arguments":{"x":1}}}`, session); rpcErrorCode(t, r) != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown key: %s", r.Body)
	}
	for body, code := range map[string]int64{
		`{not json`:                      jsonrpc.CodeParseError,
		`[1,2]`:                          jsonrpc.CodeInvalidRequest,
		`{"id":1,"method":"tools/list"}`: jsonrpc.CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":1}`:       jsonrpc.CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`: jsonrpc.CodeInvalidRequest,
	} {
		r := ta.mcpPost(body, session)
		if got := rpcErrorCode(t, r); got != code || r.Status != 400 {
			t.Errorf("%s: %d %d, want %d", body, r.Status, got, code)
		}
	}
	if r := ta.Request(http.DefaultClient, "GET", "/mcp", nil, session); r.Status != 405 || r.Header.Get("Allow") != "POST, DELETE" {
		t.Fatalf("GET: %d %v", r.Status, r.Header)
	}
	if r := ta.Request(http.DefaultClient, "PUT", "/mcp", "{}", session); r.Status != 405 || r.Header.Get("Allow") != "POST, DELETE" {
		t.Fatalf("PUT: %d %v", r.Status, r.Header)
	}
	// A wrong Host is refused as on every route.
	req, _ := http.NewRequest("POST", ta.URL()+"/mcp", strings.NewReader(initializeBody))
	req.Host = "evil.example:80"
	req.Header.Set("Authorization", auth["Authorization"])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("wrong Host: %v %v", resp, err)
	}

	// A rotation takes effect at once: the old token is refused on the next
	// request, the new one admitted.
	newToken, err := instance.RotateAgentToken(ta.app.cfg.ConfigDir)
	if err != nil {
		t.Fatal(err)
	}
	if r := ta.mcpPost(initializeBody, auth); r.Status != 401 {
		t.Fatalf("old token after rotation: %d", r.Status)
	}
	if r := ta.mcpPost(initializeBody, map[string]string{"Authorization": "Bearer " + newToken}); r.Status != 200 {
		t.Fatalf("new token: %d %s", r.Status, r.Body)
	}
}

// TestMCPAgentOff: /mcp is served with the agent connection off.
func TestMCPAgentOff(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Agent = false
	ta := startAppWith(t, cfg)
	if r := ta.mcpPost(initializeBody, map[string]string{"Authorization": "Bearer " + ta.Token()}); r.Status != 200 {
		t.Fatalf("initialize with AGENT=off: %d %s", r.Status, r.Body)
	}
}

// TestMCPUpdateReachesOpenTab: an open tab receives update_document as
// plan:updates, the same journal as a person's edit.
func TestMCPUpdateReachesOpenTab(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("acme/rocket")
	doc := ta.CreateDocument("acme/rocket", "Live")
	tab := ta.DialRoom(doc.ID)
	tab.Send(map[string]any{"type": "plan:open", "id": "o1"})
	tab.Until("plan:snapshot")
	cs := ta.mcpSession("codex")
	upd := callTool(t, cs, "update_document", map[string]any{"id": doc.ID, "revision": 0, "plan": "# Live\n\nFrom an agent.\n", "idempotencyKey": "x"})
	wantOK(t, upd, "update_document")
	frame := tab.Until("plan:updates")
	if frame["version"] != float64(0) || len(frame["updates"].([]any)) != 1 {
		t.Fatalf("plan:updates: %v", frame)
	}
	msg := tab.Until("chat:message")
	if m := msg["message"].(map[string]any); m["text"] != "codex replaced the plan over MCP (revision 1): added 1 block, under “Live”." {
		t.Fatalf("chat:message: %v", msg)
	}
}

// TestMCPUpdateReplayAcrossRestart: an update's replay is answered after
// Chopin restarts.
func TestMCPUpdateReplayAcrossRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	ta := startAppWith(t, cfg)
	ta.AddRepository("acme/rocket")
	doc := ta.CreateDocument("acme/rocket", "Durable")
	cs := ta.mcpSession("codex")
	update := map[string]any{"id": doc.ID, "revision": 0, "plan": "# Durable\n\nKept.\n", "idempotencyKey": "once"}
	wantOK(t, callTool(t, cs, "update_document", update), "update_document")
	cs.Close()
	ta.Stop()

	ta = startAppWith(t, cfg)
	cs = ta.mcpSession("codex")
	re := callTool(t, cs, "update_document", update)
	if re.IsError || re.Data["replayed"] != true || re.num("revision") != 1 {
		t.Fatalf("replay after restart: %v", re.Data)
	}
	update["plan"] = "# Durable\n\nChanged.\n"
	wantRefusal(t, callTool(t, cs, "update_document", update), "idempotency-conflict")
}

// TestMCPInvokePlanner: without a Planner the call is refused in
// Chopin's words and nothing is kept; with one attached, the instruction is
// posted under the client's name (or as a system follow-up) and reaches the
// Planner as a turn.
func TestMCPInvokePlanner(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("acme/rocket")
	doc := ta.CreateDocument("acme/rocket", "Invoked")
	cs := ta.mcpSession("gemini-cli")

	refused := callTool(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Draft the plan."})
	wantRefusal(t, refused, "planner-not-attached")
	var person struct{ Code, Message string }
	ta.Do("POST", "/api/channels/"+doc.ID+"/messages", map[string]string{"text": "@chopin Draft the plan."}).JSON(t, &person)
	// The HTTP answer keeps the spec's words; what an MCP client relays
	// reaches a person, in Chopin's.
	if got := refused.str("message"); person.Code != "planner-not-attached" || got == person.Message ||
		!strings.HasPrefix(got, "No Planner is attached to this document, so nothing was posted. Connect a Planner") {
		t.Fatalf("invoke_planner's refusal %q (a person's: %q)", got, person.Message)
	}
	var msgs struct {
		Messages []struct{ Role, Author, Text string }
	}
	ta.Do("GET", "/api/channels/"+doc.ID+"/messages", nil).JSON(t, &msgs)
	if len(msgs.Messages) != 0 {
		t.Fatalf("a refused instruction was kept: %+v", msgs.Messages)
	}
	wantInvalidParams(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "  "})
	wantInvalidParams(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "x", "as": "person"})
	wantInvalidParams(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": strings.Repeat("x", 64<<10+1)})

	prompts := make(chan string, 4)
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	link, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: doc.ID,
		Handler: client.Handler{Turn: func(_ context.Context, tn *client.Turn) error {
			prompts <- tn.Prompt()
			return tn.Text("On it.")
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()

	posted := callTool(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Draft the plan."})
	wantOK(t, posted, "invoke_planner")
	if posted.str("messageId") == "" {
		t.Fatalf("invoke_planner: %v", posted.Data)
	}
	if p := <-prompts; !strings.HasSuffix(p, "@gemini-cli: Draft the plan.") {
		t.Fatalf("prompt: %q", p)
	}
	for deadline := time.Now().Add(apptest.Wait); ta.app.agent.Busy(doc.ID); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Planner's turn does not end")
		}
	}
	wantOK(t, callTool(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "The run finished.", "as": "system"}), "invoke_planner as system")
	if p := <-prompts; !strings.HasSuffix(p, "The run finished.") || strings.Contains(p, "@") {
		t.Fatalf("system prompt: %q", p)
	}
	ta.Do("GET", "/api/channels/"+doc.ID+"/messages", nil).JSON(t, &msgs)
	var kinds []string
	for _, m := range msgs.Messages {
		kinds = append(kinds, m.Role+":"+m.Author)
	}
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "person:gemini-cli planner:") || !strings.Contains(got, "system:") {
		t.Fatalf("Chat: %s", got)
	}
}

// mcpCommand runs `chopin mcp` in this process with env, and connects the
// SDK's client to its stdin and stdout. It returns the session, what the
// command logged, and a wait for its exit status once the session closes.
func mcpCommand(t *testing.T, env map[string]string) (*mcp.ClientSession, *apptest.Buffer, func() int) {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	stderr := &apptest.Buffer{}
	cli := &cli.CLI{Local: Local{}, Stdin: stdinR, Stdout: stdoutW, Stderr: stderr, Getenv: func(k string) string { return env[k] }}
	done := make(chan int, 1)
	go func() {
		code := cli.Run(context.Background(), []string{"mcp"})
		stdoutW.Close()
		done <- code
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v\n%s", err, stderr)
	}
	return cs, stderr, func() int {
		cs.Close()
		select {
		case code := <-done:
			return code
		case <-time.After(apptest.Wait):
			t.Fatalf("chopin mcp did not exit\n%s", stderr)
			return -1
		}
	}
}

// TestMCPCommandForwards: `chopin mcp` forwards to the running Chopin under
// the client's own name, and stdout carries nothing but MCP.
func TestMCPCommandForwards(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	cs, stderr, wait := mcpCommand(t, apptest.Env(dir))
	if cs.InitializeResult().ServerInfo.Name != "chopin" {
		t.Fatalf("initialize: %+v", cs.InitializeResult())
	}
	made := callTool(t, cs, "create_document", map[string]any{"idempotencyKey": "s1", "repository": "acme/rocket", "title": "Over stdio", "plan": "# Over stdio\n"})
	wantOK(t, made, "create_document")
	upd := callTool(t, cs, "update_document", map[string]any{"id": made.str("id"), "revision": 0, "plan": "# Over stdio\n\nForwarded.\n", "idempotencyKey": "s2"})
	wantOK(t, upd, "update_document")
	wantRefusal(t, callTool(t, cs, "read_document", map[string]any{"id": "/documents/acme/rocket/none"}), "document-unavailable")
	wantInvalidParams(t, cs, "read_document", map[string]any{"id": made.str("id"), "x": 1})
	var msgs struct{ Messages []struct{ Text string } }
	ta.Do("GET", "/api/channels/"+made.str("id")+"/messages", nil).JSON(t, &msgs)
	if len(msgs.Messages) != 1 || !strings.HasPrefix(msgs.Messages[0].Text, "stdio-client replaced the plan") {
		t.Fatalf("Chat: %+v", msgs.Messages)
	}
	if code := wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "forwarding to the running Chopin") {
		t.Fatalf("stderr: %s", stderr)
	}
}

// TestMCPCommandStartsChopin: with no Chopin running, `chopin mcp` starts
// one without a browser and serves until the client goes; the document it
// made is there on the next start.
func TestMCPCommandStartsChopin(t *testing.T) {
	dir := t.TempDir()
	env := apptest.Env(dir)
	cs, stderr, wait := mcpCommand(t, env)
	repos := callTool(t, cs, "list_repositories", map[string]any{})
	wantOK(t, repos, "list_repositories")
	if code := wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "started Chopin for this MCP client") {
		t.Fatalf("stderr: %s", stderr)
	}
	// It has stopped: the data directory is free for another Chopin.
	ta := startAppWith(t, testConfig(t, dir))
	ta.Stop()
}

// TestMCPCommandSurvivesRestart: when Chopin restarts (here on another
// port), `chopin mcp` finds it again and opens a new session for the client,
// which notices nothing.
func TestMCPCommandSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	ta := startAppWith(t, cfg)
	ta.AddRepository("acme/rocket")
	cs, stderr, wait := mcpCommand(t, apptest.Env(dir))
	wantOK(t, callTool(t, cs, "list_repositories", map[string]any{}), "before the restart")
	ta.Stop()
	ta = startAppWith(t, cfg)
	repos := callTool(t, cs, "list_repositories", map[string]any{})
	if repos.IsError || !strings.Contains(repos.Text, "acme/rocket") {
		t.Fatalf("after the restart: %+v\n%s", repos, stderr)
	}
	if code := wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// A model sees a tool's result as its client passes it on: Claude Code and
// Codex hand it structuredContent alone when there is one, Gemini CLI and
// others the text block. So each must hold what the model needs:
// read_document's page (the plan's text) with the call that continues, and
// every other tool's answer in both. Every result, refusals included, fits
// the outputSchema its tool declares, since the clients built on the
// TypeScript SDK check it.
func TestMCPResultsHoldWhatTheModelNeeds(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("acme/rocket")
	cs := ta.mcpSession("reader")
	schemas := map[string]*jsonschema.Resolved{}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		raw, _ := json.Marshal(tl.OutputSchema)
		var s jsonschema.Schema
		if tl.OutputSchema == nil || json.Unmarshal(raw, &s) != nil || s.Type != "object" {
			t.Fatalf("%s declares no object outputSchema: %s", tl.Name, raw)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s's outputSchema: %v", tl.Name, err)
		}
		schemas[tl.Name] = rs
	}
	call := func(name string, args map[string]any) toolOut {
		t.Helper()
		o := callTool(t, cs, name, args)
		if err := schemas[name].Validate(o.Data); err != nil {
			t.Fatalf("%s's result %v does not fit its outputSchema: %v", name, o.Data, err)
		}
		if name != "read_document" || o.IsError {
			var same map[string]any
			if json.Unmarshal([]byte(o.Text), &same) != nil && !o.IsError || !o.IsError && fmt.Sprint(same) != fmt.Sprint(o.Data) {
				t.Fatalf("%s: text %s is not the structuredContent %v", name, o.Text, o.Data)
			}
		}
		return o
	}

	source := "# Launch\n\nShip the rocket.\n\n## Crew\n\nThree.\n"
	made := call("create_document", map[string]any{"idempotencyKey": "k", "repository": "acme/rocket", "title": "Launch",
		"plan": source, "brief": "Plan the launch.\nKeep it short."})
	id := made.str("id")
	call("list_repositories", map[string]any{})
	if list := call("list_documents", map[string]any{"repository": "acme/rocket"}); !strings.Contains(list.Text, `"title":"Launch"`) {
		t.Fatalf("list_documents: %s", list.Text)
	}

	read := call("read_document", map[string]any{"id": id})
	if page := read.str("text"); !strings.HasPrefix(page, "document: Launch\n") || !strings.HasSuffix(page, "text:\n"+source) {
		t.Fatalf("read_document's structuredContent has not the page: %v\ntext block:\n%s", read.Data, read.Text)
	}
	// The text block says the same, the brief included.
	if read.Text != "brief: \"Plan the launch.\\nKeep it short.\"\n"+read.str("text") || read.str("brief") != "Plan the launch.\nKeep it short." {
		t.Fatalf("read_document's text block:\n%s", read.Text)
	}
	if next, ok := read.Data["next"]; !ok || next != nil || read.num("revision") != 0 || read.str("url") != ta.URL()+"/documents/acme/rocket/launch" {
		t.Fatalf("read_document at the end: %v", read.Data)
	}

	// A page that stops early names the call that continues, in both.
	page := call("read_document", map[string]any{"id": id, "limit": 3})
	m := regexp.MustCompile(`(?m)^next: read_document (\{.*\})$`).FindStringSubmatch(page.Text)
	var next map[string]any
	if m == nil || json.Unmarshal([]byte(m[1]), &next) != nil || fmt.Sprint(next) != fmt.Sprint(page.Data["next"]) {
		t.Fatalf("next: %v, the text's %v\n%s", page.Data["next"], m, page.Text)
	}
	rest := call("read_document", next)
	if rest.Text != rest.str("text") || !strings.HasPrefix(rest.Text, "document: ") || !strings.HasSuffix(rest.Text, "text:\n\n## Crew\n\n") {
		t.Fatalf("the second page:\n%s", rest.Text)
	}

	// Refusals fit the schemas too.
	stale := call("update_document", map[string]any{"id": id, "revision": 5, "plan": "# Launch\n", "idempotencyKey": "u"})
	wantRefusal(t, stale, "revision-conflict")
	call("read_document", map[string]any{"id": "/documents/acme/rocket/none"})
	upd := call("update_document", map[string]any{"id": id, "revision": 0, "plan": source + "\nMore.\n", "idempotencyKey": "u2"})
	wantOK(t, upd, "update_document")
	call("rename_document", map[string]any{"id": id, "title": "Liftoff"})
	call("archive_document", map[string]any{"id": id})
	if r := call("read_document", map[string]any{"id": id, "offset": 4}); !strings.HasPrefix(r.Text, "archived: "+r.str("archivedAt")+" ") || !strings.HasSuffix(r.Text, "\n"+r.str("text")) {
		t.Fatalf("an archived document's page:\n%s", r.Text)
	}
	call("restore_document", map[string]any{"id": id})
	wantRefusal(t, call("invoke_planner", map[string]any{"id": id, "instruction": "Go"}), "planner-not-attached")
	wantRefusal(t, call("upload_image", map[string]any{"id": id, "data": "AAAA", "mimeType": "image/svg+xml"}), "unsupported-type")
}
