package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// TestWireGolden pins the exact wire form of every message type, and that
// each decodes back to the same value with the strict decoder.
func TestWireGolden(t *testing.T) {
	tests := []struct {
		msg  Message
		wire string
	}{
		{Attached{Version: 1, Document: AttachedDocument{ID: "d1", Title: "Plan", Repository: "octo/score", URL: "http://127.0.0.1:8787/documents/d1"}},
			`{"type":"attached","version":1,"document":{"id":"d1","title":"Plan","repository":"octo/score","url":"http://127.0.0.1:8787/documents/d1"}}`},
		{Attached{Version: 1, Document: AttachedDocument{ID: "d1", Title: "Plan", Repository: "octo/score"}, Features: []string{}},
			`{"type":"attached","version":1,"document":{"id":"d1","title":"Plan","repository":"octo/score"},"features":[]}`},
		{Attached{Version: 1, Document: AttachedDocument{ID: "d1", Title: "", Repository: "o/r"}, Features: []string{"run-stage-deltas"}},
			`{"type":"attached","version":1,"document":{"id":"d1","title":"","repository":"o/r"},"features":["run-stage-deltas"]}`},
		{Refused{Code: "planner-attached", Message: "octocat is connected to this document. A document has one agent connected at a time."},
			`{"type":"refused","code":"planner-attached","message":"octocat is connected to this document. A document has one agent connected at a time."}`},
		{Refused{Code: "unavailable", Message: "m", Retry: true}, `{"type":"refused","code":"unavailable","message":"m","retry":true}`},
		{Start{Session: "s1", Mode: "planner"}, `{"type":"start","session":"s1","mode":"planner"}`},
		{Turn{Session: "s1", Turn: "t1", Prompt: "@ana: <b>hi</b> & bye", Tools: []Tool{}},
			`{"type":"turn","session":"s1","turn":"t1","prompt":"@ana: <b>hi</b> & bye","tools":[]}`},
		{Turn{Session: "s1", Turn: "t1", Prompt: "p", Instructions: "i", Model: "m",
			Tools:          []Tool{{Name: "read_plan", Description: "Read.", InputSchema: json.RawMessage(`{"type":"object"}`)}, {Name: "open_decisions"}},
			ResponseFormat: &ResponseFormat{Type: "json", Schema: json.RawMessage(`{}`), Name: "n", Description: "d"}},
			`{"type":"turn","session":"s1","turn":"t1","prompt":"p","instructions":"i","model":"m","tools":[{"name":"read_plan","description":"Read.","inputSchema":{"type":"object"}},{"name":"open_decisions"}],"responseFormat":{"type":"json","schema":{},"name":"n","description":"d"}}`},
		{Abort{Session: "s1", Turn: "t1"}, `{"type":"abort","session":"s1","turn":"t1"}`},
		{HostToolResult{Session: "s1", Turn: "t1", ToolCallID: "c1", Output: json.RawMessage(`{"ok":true}`)},
			`{"type":"host-tool-result","session":"s1","turn":"t1","toolCallId":"c1","output":{"ok":true}}`},
		{HostToolResult{Session: "s1", Turn: "t1", ToolCallID: "c1", Output: json.RawMessage(`{"error":"The turn has ended."}`), IsError: true},
			`{"type":"host-tool-result","session":"s1","turn":"t1","toolCallId":"c1","output":{"error":"The turn has ended."},"isError":true}`},
		{InputResult{Request: "r1", Status: "answered", Value: json.RawMessage(`true`)}, `{"type":"input-result","request":"r1","status":"answered","value":true}`},
		{InputResult{Request: "r1", Status: "failed", Message: "why"}, `{"type":"input-result","request":"r1","status":"failed","message":"why"}`},
		{Stop{Request: "c1", Session: "s1"}, `{"type":"stop","request":"c1","session":"s1"}`},
		{Stop{Request: "c1", Session: "s1", Run: "r1"}, `{"type":"stop","request":"c1","session":"s1","run":"r1"}`},
		{Resume{Request: "c1", Session: "s1", Run: "r1"}, `{"type":"resume","request":"c1","session":"s1","run":"r1"}`},
		{Destroy{Session: "s1"}, `{"type":"destroy","session":"s1"}`},
		{ProtocolError{Code: "malformed-message", Message: "m"}, `{"type":"error","code":"malformed-message","message":"m"}`},

		{Attach{Version: 1, Document: "d1"}, `{"type":"attach","version":1,"document":"d1"}`},
		{Attach{Version: 1, Document: "https://x/d", Checkout: &Checkout{Origin: "git@github.com:o/r.git", Branch: "main", Head: "abc"}},
			`{"type":"attach","version":1,"document":"https://x/d","checkout":{"origin":"git@github.com:o/r.git","branch":"main","head":"abc"}}`},
		{Started{Session: "s1"}, `{"type":"started","session":"s1"}`},
		{StartFailed{Session: "s1", Message: "no model"}, `{"type":"start-failed","session":"s1","message":"no model"}`},
		{Tools{Session: "s1", Turn: "t1", Names: []string{"bash"}}, `{"type":"tools","session":"s1","turn":"t1","names":["bash"]}`},
		{HostToolCall{Session: "s1", Turn: "t1", ToolCallID: "c1", ToolName: "read_plan", Input: "{}"},
			`{"type":"host-tool-call","session":"s1","turn":"t1","toolCallId":"c1","toolName":"read_plan","input":"{}"}`},
		{TurnEnd{Session: "s1", Turn: "t1", Status: "finished"}, `{"type":"turn-end","session":"s1","turn":"t1","status":"finished"}`},
		{TurnEnd{Session: "s1", Turn: "t1", Status: "failed", Message: "boom"}, `{"type":"turn-end","session":"s1","turn":"t1","status":"failed","message":"boom"}`},
		{InputCancel{Request: "r1"}, `{"type":"input-cancel","request":"r1"}`},
		{ControlResult{Request: "c1", OK: false, Message: "ended"}, `{"type":"control-result","request":"c1","ok":false,"message":"ended"}`},
		{ControlResult{Request: "c1", OK: true}, `{"type":"control-result","request":"c1","ok":true}`},
		{Detach{}, `{"type":"detach"}`},
	}
	tests = append(tests, partGolden()...)
	tests = append(tests, inputGolden()...)
	tests = append(tests, runsGolden()...)
	checkGolden(t, tests)
}

// checkGolden requires each message to encode to exactly its wire form and
// that wire form to decode back to the same message.
func checkGolden(t *testing.T, tests []struct {
	msg  Message
	wire string
}) {
	t.Helper()
	for _, tt := range tests {
		got, err := Encode(tt.msg)
		if err != nil {
			t.Fatalf("Encode(%#v): %v", tt.msg, err)
		}
		if string(got) != tt.wire {
			t.Errorf("Encode(%T):\n got %s\nwant %s", tt.msg, got, tt.wire)
		}
		decode := DecodeClientFrame
		if _, server := messageTypes().server[tt.msg.MessageType()]; server {
			decode = DecodeServerFrame
		}
		back, err := decode([]byte(tt.wire))
		if err != nil {
			t.Errorf("decode %s: %v", tt.wire, err)
			continue
		}
		if !reflect.DeepEqual(back, tt.msg) {
			t.Errorf("decode %s:\n got %#v\nwant %#v", tt.wire, back, tt.msg)
		}
	}
}

func partGolden() []struct {
	msg  Message
	wire string
} {
	part := func(p StreamPart, wire string) struct {
		msg  Message
		wire string
	} {
		return struct {
			msg  Message
			wire string
		}{Part{Session: "s1", Turn: "t1", Part: p}, `{"type":"part","session":"s1","turn":"t1","part":` + wire + `}`}
	}
	return []struct {
		msg  Message
		wire string
	}{
		part(StreamPart{Type: "stream-start"}, `{"type":"stream-start"}`),
		part(StreamPart{Type: "stream-start", ModelID: "m"}, `{"type":"stream-start","modelId":"m"}`),
		part(StreamPart{Type: "text-start", ID: "a"}, `{"type":"text-start","id":"a"}`),
		part(StreamPart{Type: "text-delta", ID: "a", Delta: ""}, `{"type":"text-delta","id":"a","delta":""}`),
		part(StreamPart{Type: "text-end", ID: "a"}, `{"type":"text-end","id":"a"}`),
		part(StreamPart{Type: "reasoning-start", ID: "r"}, `{"type":"reasoning-start","id":"r"}`),
		part(StreamPart{Type: "reasoning-delta", ID: "r", Delta: "hm"}, `{"type":"reasoning-delta","id":"r","delta":"hm"}`),
		part(StreamPart{Type: "reasoning-end", ID: "r"}, `{"type":"reasoning-end","id":"r"}`),
		part(StreamPart{Type: "tool-input-start", ID: "c", ToolName: "read_plan"}, `{"type":"tool-input-start","id":"c","toolName":"read_plan"}`),
		part(StreamPart{Type: "tool-input-start", ID: "c", ToolName: "bash", ProviderExecuted: true, Dynamic: true, Title: "Run"},
			`{"type":"tool-input-start","id":"c","toolName":"bash","providerExecuted":true,"dynamic":true,"title":"Run"}`),
		part(StreamPart{Type: "tool-input-delta", ID: "c", Delta: "{"}, `{"type":"tool-input-delta","id":"c","delta":"{"}`),
		part(StreamPart{Type: "tool-input-end", ID: "c"}, `{"type":"tool-input-end","id":"c"}`),
		part(StreamPart{Type: "tool-call", ToolCallID: "c", ToolName: "bash", Input: `{"cmd":"ls"}`, ProviderExecuted: true},
			`{"type":"tool-call","toolCallId":"c","toolName":"bash","input":"{\"cmd\":\"ls\"}","providerExecuted":true}`),
		part(StreamPart{Type: "tool-result", ToolCallID: "c", ToolName: "bash", Result: json.RawMessage(`{"error":{"code":"no-repository-credential","kind":"NoRepositoryCredential","message":"No token."}}`), IsError: true},
			`{"type":"tool-result","toolCallId":"c","toolName":"bash","result":{"error":{"code":"no-repository-credential","kind":"NoRepositoryCredential","message":"No token."}},"isError":true}`),
		part(StreamPart{Type: "tool-result", ToolCallID: "c", ToolName: "bash", Result: json.RawMessage(`"partial"`), Preliminary: true, Dynamic: true},
			`{"type":"tool-result","toolCallId":"c","toolName":"bash","result":"partial","preliminary":true,"dynamic":true}`),
		part(StreamPart{Type: "finish-step", FinishReason: &FinishReason{Unified: "tool-calls"}, Usage: &Usage{}},
			`{"type":"finish-step","finishReason":{"unified":"tool-calls"},"usage":{}}`),
		part(StreamPart{Type: "finish", FinishReason: &FinishReason{Unified: "stop", Raw: "end_turn"},
			TotalUsage: &Usage{InputTokens: &InputTokens{Total: ptr[int64](10), CacheRead: ptr[int64](2)}, OutputTokens: &OutputTokens{Total: ptr[int64](5), Reasoning: ptr[int64](1)}}},
			`{"type":"finish","finishReason":{"unified":"stop","raw":"end_turn"},"totalUsage":{"inputTokens":{"total":10,"cacheRead":2},"outputTokens":{"total":5,"reasoning":1}}}`),
		part(StreamPart{Type: "error", Error: "model down"}, `{"type":"error","error":"model down"}`),
	}
}

func inputGolden() []struct {
	msg  Message
	wire string
} {
	req := func(in Input, wire string) struct {
		msg  Message
		wire string
	} {
		return struct {
			msg  Message
			wire string
		}{InputRequest{Request: "r1", Session: "s1", Input: in}, `{"type":"input-request","request":"r1","session":"s1","input":` + wire + `}`}
	}
	return []struct {
		msg  Message
		wire string
	}{
		req(Input{Method: "questionnaire", Params: &QuestionnaireParams{Questions: []QuestionItem{{Question: "Storage?", Header: "Store",
			Options: []Option{{Label: "SQLite", Description: "One file", Preview: "```mermaid\ngraph TD\n```"}, {Label: "Postgres", Description: ""}}, MultiSelect: true}}}},
			`{"method":"questionnaire","params":{"questions":[{"question":"Storage?","header":"Store","options":[{"label":"SQLite","description":"One file","preview":"`+"```mermaid\\ngraph TD\\n```"+`"},{"label":"Postgres","description":""}],"multiSelect":true}]}}`),
		req(Input{Method: "confirm", Title: "Ship?", Message: ""}, `{"method":"confirm","title":"Ship?","message":""}`),
		req(Input{Method: "select", Title: "Pick", Choices: []string{"a", "b"}}, `{"method":"select","title":"Pick","choices":["a","b"]}`),
		req(Input{Method: "input", Title: "Name", Placeholder: "x"}, `{"method":"input","title":"Name","placeholder":"x"}`),
		req(Input{Method: "editor", Title: "Edit"}, `{"method":"editor","title":"Edit"}`),
		{InputRequest{Request: "r2", Session: "s1", WorkflowRunID: "w", WorkflowStageID: "st", RootRunID: "root",
			Block: &Block{Index: 3, Digest: "sha256:" + strings.Repeat("ab", 32)}, Input: Input{Method: "editor", Title: "E", Initial: "i"}},
			`{"type":"input-request","request":"r2","session":"s1","workflowRunId":"w","workflowStageId":"st","rootRunId":"root","block":{"index":3,"digest":"sha256:` + strings.Repeat("ab", 32) + `"},"input":{"method":"editor","title":"E","initial":"i"}}`},
	}
}

func runsGolden() []struct {
	msg  Message
	wire string
} {
	return []struct {
		msg  Message
		wire string
	}{
		{Runs{Session: "s1", Active: []string{}, Paused: []string{}, Cards: []RunCard{}}, `{"type":"runs","session":"s1","active":[],"paused":[],"cards":[]}`},
		{Runs{Session: "s1", Active: []string{"r1"}, Paused: []string{"r2"}, Cards: []RunCard{
			{ID: "r1", Name: "Build", Status: "running", Started: 100, Updated: 120, EarlierStages: ptr(3), Waiting: 1,
				Stages: []Stage{{ID: "a", Name: "Plan", Status: "completed", Kind: "tool", Started: ptr[int64](100), Ended: ptr[int64](110)}, {ID: "b", Name: "Code", ParentIDs: []string{"a"}, Status: "running"}}},
			{ID: "r2", Name: "Done", Status: "finished", Started: 1, Updated: 2, Ended: ptr[int64](2), StagesDelta: true, Stages: []Stage{}},
		}}, `{"type":"runs","session":"s1","active":["r1"],"paused":["r2"],"cards":[` +
			`{"id":"r1","name":"Build","status":"running","started":100,"updated":120,"stages":[{"id":"a","name":"Plan","kind":"tool","status":"completed","started":100,"ended":110},{"id":"b","name":"Code","parentIds":["a"],"status":"running"}],"earlierStages":3,"waiting":1},` +
			`{"id":"r2","name":"Done","status":"finished","started":1,"updated":2,"ended":2,"stagesDelta":true,"stages":[],"waiting":0}]}`},
	}
}

// TestAnswerValues pins input-result's value for every method and status.
func TestAnswerValues(t *testing.T) {
	questionnaire := &Input{Method: MethodQuestionnaire, Params: &QuestionnaireParams{Questions: []QuestionItem{
		{Question: "Q0", Header: "h", Options: []Option{{Label: "A", Description: "", Preview: "pv"}}},
		{Question: "Q1", Header: "h", MultiSelect: true, Options: []Option{{Label: "X"}, {Label: "Y"}}},
		{Question: "Q2", Header: "h"},
		{Question: "Q3", Header: "h"},
	}}}
	all := []QuestionAnswer{
		{QuestionIndex: 0, Kind: KindOption, Answer: ptr("A"), Preview: "pv"},
		{QuestionIndex: 1, Kind: KindMulti, Selected: []string{"X", "Y"}},
		{QuestionIndex: 2, Kind: KindCustom, Answer: ptr("mine")},
		{QuestionIndex: 3, Kind: KindChat, Answer: ptr("said")},
	}
	tests := []struct {
		name string
		in   *Input
		a    Answer
		wire string
	}{
		{"questionnaire answered", questionnaire, Answer{Status: "answered", Answers: all},
			`{"type":"input-result","request":"r","status":"answered","value":{"answers":[` +
				`{"questionIndex":0,"question":"Q0","kind":"option","answer":"A","preview":"pv"},` +
				`{"questionIndex":1,"question":"Q1","kind":"multi","answer":null,"selected":["X","Y"]},` +
				`{"questionIndex":2,"question":"Q2","kind":"custom","answer":"mine"},` +
				`{"questionIndex":3,"question":"Q3","kind":"chat","answer":"said"}],"cancelled":false}}`},
		{"questionnaire cancelled partly answered", questionnaire, Answer{Status: "cancelled", Answers: all[2:3]},
			`{"type":"input-result","request":"r","status":"cancelled","value":{"answers":[{"questionIndex":2,"question":"Q2","kind":"custom","answer":"mine"}],"cancelled":true}}`},
		{"questionnaire cancelled", questionnaire, Answer{Status: "cancelled"},
			`{"type":"input-result","request":"r","status":"cancelled","value":{"answers":[],"cancelled":true}}`},
		{"questionnaire failed", questionnaire, Answer{Status: "failed", Message: "no"},
			`{"type":"input-result","request":"r","status":"failed","message":"no"}`},
		{"confirm yes", &Input{Method: "confirm"}, Answer{Status: "answered", Yes: true}, `{"type":"input-result","request":"r","status":"answered","value":true}`},
		{"confirm no", &Input{Method: "confirm"}, Answer{Status: "answered"}, `{"type":"input-result","request":"r","status":"answered","value":false}`},
		{"confirm cancelled", &Input{Method: "confirm"}, Answer{Status: "cancelled", Yes: true}, `{"type":"input-result","request":"r","status":"cancelled","value":false}`},
		{"select choice", &Input{Method: "select"}, Answer{Status: "answered", Choice: ptr("b")}, `{"type":"input-result","request":"r","status":"answered","value":"b"}`},
		{"select written", &Input{Method: "select"}, Answer{Status: "answered"}, `{"type":"input-result","request":"r","status":"answered","value":null}`},
		{"select cancelled", &Input{Method: "select"}, Answer{Status: "cancelled"}, `{"type":"input-result","request":"r","status":"cancelled","value":null}`},
		{"input answered", &Input{Method: "input"}, Answer{Status: "answered", Text: "hi"}, `{"type":"input-result","request":"r","status":"answered","value":"hi"}`},
		{"editor answered", &Input{Method: "editor"}, Answer{Status: "answered", Text: ""}, `{"type":"input-result","request":"r","status":"answered","value":""}`},
		{"editor cancelled", &Input{Method: "editor"}, Answer{Status: "cancelled"}, `{"type":"input-result","request":"r","status":"cancelled","value":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.a.Result("r", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := Encode(res)
			if string(got) != tt.wire {
				t.Errorf("got  %s\nwant %s", got, tt.wire)
			}
		})
	}
	for _, bad := range []Answer{
		{Status: "answered", Answers: all[:2]},                                          // not every question
		{Status: "answered", Answers: []QuestionAnswer{all[1], all[0], all[2], all[3]}}, // out of order
		{Status: "expired"},
		{Status: "failed"},
	} {
		if _, err := bad.Result("r", questionnaire); err == nil {
			t.Errorf("Answer %+v was accepted", bad)
		}
	}
}

// TestDecodeStrict refuses every way a frame can differ from the spec.
func TestDecodeStrict(t *testing.T) {
	long := strings.Repeat("x", 129)
	tests := []struct{ frame, reason string }{
		{`{"type":"started","session":"s","extra":1}`, "extra is not a field"},
		{`{"type":"started","Session":"s"}`, "Session is not a field"},
		{`{"TYPE":"started","session":"s"}`, "no type"},
		{`{"type":"started","session":"s","session":"t"}`, "repeats the field"},
		{`{"type":"started"}`, "session is missing"},
		{`{"type":"started","session":null}`, "cannot be null"},
		{`{"type":"started","session":1}`, "must be a string"},
		{`{"type":"started","session":""}`, "session is empty"},
		{`{"type":"started","session":"` + long + `"}`, "129 characters"},
		{`{"type":"control-result","request":"r","ok":"yes"}`, "true or false"},
		{`{"type":"control-result","request":"r"}`, "ok is missing"},
		{`{"type":"attach","version":1.5,"document":"d"}`, "whole number"},
		{`{"type":"attach","version":1,"document":"d","checkout":{"sha":"x"}}`, "checkout.sha"},
		{`{"type":"part","session":"s","turn":"t","part":{"type":"text-start","id":"x","delta":"y"}}`, "part.delta is not a field"},
		{`{"type":"part","session":"s","turn":"t","part":{"type":"text-delta","id":"x"}}`, "part.delta is missing"},
		{`{"type":"part","session":"s","turn":"t","part":{"type":"source","id":"x"}}`, "part.type \"source\""},
		{`{"type":"part","session":"s","turn":"t","part":{"type":"tool-call","toolCallId":"c","toolName":"n","input":"{}","providerExecuted":false}}`, "providerExecuted must be true"},
		{`{"type":"part","session":"s","turn":"t","part":{"type":"finish","finishReason":{"unified":"done"},"totalUsage":{}}}`, "unified"},
		{`{"type":"part","session":"s","turn":"t","part":{"type":"finish","finishReason":{"unified":"stop"},"totalUsage":{"inputTokens":{"total":-1}}}}`, "negative"},
		{`{"type":"turn-end","session":"s","turn":"t","status":"done"}`, "status"},
		{`{"type":"turn-end","session":"s","turn":"t","status":"failed","message":"` + strings.Repeat("é", 4001) + `"}`, "4001 characters"},
		{`{"type":"input-request","request":"r","session":"s","input":{"method":"confirm","title":"t"}}`, "input.message is missing"},
		{`{"type":"input-request","request":"r","session":"s","input":{"method":"ask","title":"t"}}`, "input.method"},
		{`{"type":"input-request","request":"r","session":"s","block":{"index":0,"digest":"sha256:zz"},"input":{"method":"input","title":"t"}}`, "digest"},
		{`{"type":"input-request","request":"r","session":"s","input":{"method":"questionnaire","params":{"questions":[]}}}`, "1 to 16"},
		{`{"type":"runs","session":"s","active":[],"paused":[],"cards":[{"id":"r","name":"n","status":"idle","started":0,"updated":0,"stages":[],"waiting":0}]}`, "not a run status"},
		{`{"type":"runs","session":"s","active":[],"paused":[],"cards":[{"id":"r","name":"n","status":"running","started":0,"updated":0,"stagesDelta":true,"earlierStages":1,"stages":[],"waiting":0}]}`, "earlierStages"},
		{`{"type":"runs","session":"s","active":[],"paused":[]}`, "cards is missing"},
		{`{"type":"runs","session":"s","active":[],"paused":[],"cards":[{"id":"r","name":"n","status":"running","started":0,"updated":0,"stagesDelta":false,"stages":[],"waiting":0}]}`, "cards[0].stagesDelta is always true"},
		{`{"type":"part","session":"s","turn":"t","part":{"type":"text-delta","id":"x","delta":"y","":1}}`, "part. is not a field"},
		{`{"type":"resume","type":"resume"}`, "repeats the field"},
		{`{"type":"tools","session":"s","turn":"t","names":["` + long + `"]}`, "names[0]"},
		{`{"type":"nope"}`, "not a message type"},
		{`{"type":"attached","version":1,"document":{"id":"d","title":"","repository":"o/r"}}`, "not a message type"},
		{`{"type":7}`, "type must be a string"},
		{`[]`, "not a JSON object"},
		{`"detach"`, "not a JSON object"},
		{`{"type":"detach"} {}`, "not one JSON value"},
		{`{"type":"detach"`, "not one JSON value"},
		{"{\"type\":\"detach\",\"x\":\"\xff\"}", "UTF-8"},
	}
	for _, tt := range tests {
		_, err := DecodeClientFrame([]byte(tt.frame))
		var m *MalformedError
		if !errors.As(err, &m) {
			t.Errorf("%s: err = %v, want a MalformedError", tt.frame, err)
			continue
		}
		if !strings.Contains(m.Reason, tt.reason) {
			t.Errorf("%.80s: reason %q does not mention %q", tt.frame, m.Reason, tt.reason)
		}
	}
	if _, err := DecodeClientFrame([]byte(`{"type":"capabilities","catalog":{}}`)); err != nil {
		t.Errorf("capabilities: err = %v; whether the link offered the feature is the link's check", err)
	}
	big := make([]byte, MaxFrameBytes+1)
	if _, err := DecodeClientFrame(big); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("oversized frame: err = %v", err)
	}
}

func isUnoffered(err error) bool {
	var u *UnofferedError
	return errors.As(err, &u)
}

func TestParseToolError(t *testing.T) {
	ok := []string{
		`{"error":{"code":"no-repository-credential","kind":"NoRepositoryCredential","message":"No token."}}`,
		`"{\"error\":{\"code\":\"x.y_z-1\",\"message\":\"m\"}}"`,
	}
	for _, s := range ok {
		if _, found := ParseToolError(json.RawMessage(s)); !found {
			t.Errorf("ParseToolError(%s) did not recognise the envelope", s)
		}
	}
	notOK := []string{
		`{"error":"plain"}`,
		`{"error":{"code":"a b","message":"m"}}`,
		`{"error":{"code":"-a","message":"m"}}`,
		`{"error":{"code":"a","message":""}}`,
		`{"error":{"code":"a","message":"m","extra":1}}`,
		`{"error":{"code":"a","message":"m"},"more":1}`,
		`{"error":{"code":"a:b","message":"m"}}`,
		`[1]`, `null`, `"text"`,
	}
	for _, s := range notOK {
		if _, found := ParseToolError(json.RawMessage(s)); found {
			t.Errorf("ParseToolError(%s) recognised an envelope", s)
		}
	}
}

func TestRunCardApply(t *testing.T) {
	st := func(id, status string) Stage { return Stage{ID: id, Name: id, Status: status} }
	var c RunCard
	c.Apply(RunCard{ID: "r", Status: "running", Stages: []Stage{st("a", "running"), st("b", "pending")}, EarlierStages: ptr(2)})
	c.Apply(RunCard{ID: "r", Status: "running", StagesDelta: true, Stages: []Stage{st("b", "running"), st("c", "pending"), st("c", "running")}})
	want := []Stage{st("a", "running"), st("b", "running"), st("c", "running")}
	if !reflect.DeepEqual(c.Stages, want) || *c.EarlierStages != 2 || c.StagesDelta {
		t.Fatalf("after delta: %+v", c)
	}
	c.Apply(RunCard{ID: "r", Status: "finished", Ended: ptr[int64](9), Stages: []Stage{}})
	if len(c.Stages) != 3 || c.Live() {
		t.Fatalf("an empty full card must keep stages and end the run: %+v", c)
	}
	c.Apply(RunCard{ID: "r", Status: "running", Stages: []Stage{st("z", "running")}})
	if len(c.Stages) != 1 || c.EarlierStages != nil {
		t.Fatalf("a full card with stages replaces them: %+v", c)
	}
	if (&RunCard{Status: "finished"}).Live() != true {
		t.Fatal("a finished card without ended is still live")
	}
}

// TestQuestionsSchemaLimits reads the limits back out of the generated
// schema: they are the ones the decoder enforces.
func TestQuestionsSchemaLimits(t *testing.T) {
	var s struct {
		MinItems, MaxItems int
		Items              struct {
			Properties struct {
				Question, Header struct{ MaxLength int }
				Options          struct {
					MaxItems int
					Items    struct {
						Properties struct{ Label, Description struct{ MaxLength int } }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(QuestionsSchema(), &s); err != nil {
		t.Fatal(err)
	}
	p := s.Items.Properties
	got := []int{s.MinItems, s.MaxItems, p.Question.MaxLength, p.Header.MaxLength, p.Options.MaxItems,
		p.Options.Items.Properties.Label.MaxLength, p.Options.Items.Properties.Description.MaxLength}
	want := []int{1, MaxQuestions, MaxNoteChars, MaxShortChars, MaxOptions, MaxNoteChars, MaxNoteChars}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schema limits %v, want %v", got, want)
	}
}
