package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestReadEvents(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"data lines", "data: a\n\ndata: b\n\n", []string{"a", "b"}},
		{"no space after the colon", "data:a\n\n", []string{"a"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"joined lines", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"comments and other fields", ": keep-alive\nevent: chunk\nid: 7\nretry: 10\ndata: a\n\n", []string{"a"}},
		{"no blank line at the end", "data: a\n\ndata: b", []string{"a", "b"}},
		{"stops at DONE", "data: a\n\ndata: [DONE]\n\ndata: c\n\n", []string{"a", "[DONE]"}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := readEvents(strings.NewReader(tc.in), 1<<20, func(d string) (bool, error) {
				got = append(got, d)
				return d == "[DONE]", nil
			})
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	err := readEvents(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50, func(string) (bool, error) { return false, nil })
	if err == nil {
		t.Error("an event over the limit was read")
	}
}

// TestAssembleToolCalls: tool calls are assembled by index, their
// arguments never streamed before their start, and a server that sends no
// index is read by id.
func TestAssembleToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		events string
		calls  string
	}{
		{
			name: "by index, interleaved",
			chunks: []string{
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_plan","arguments":""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"open_decisions","arguments":"{"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"}"}}]}}],"usage":null}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			},
			events: "start 0 a read_plan|start 1 b open_decisions|input 1 {|input 0 {}|input 1 }",
			calls:  `[{"id":"a","type":"function","function":{"name":"read_plan","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"open_decisions","arguments":"{}"}}]`,
		},
		{
			name: "without index, whole calls in one chunk",
			chunks: []string{
				`{"choices":[{"delta":{"role":"assistant","content":"","tool_calls":[{"id":"x","function":{"name":"read_plan","arguments":"{\"offset\":1}"}},{"id":"y","function":{"name":"read_plan","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			},
			events: `start 0 x read_plan|input 0 {"offset":1}|start 1 y read_plan|input 1 {}`,
			calls:  `[{"id":"x","type":"function","function":{"name":"read_plan","arguments":"{\"offset\":1}"}},{"id":"y","type":"function","function":{"name":"read_plan","arguments":"{}"}}]`,
		},
		{
			name: "arguments before the name",
			chunks: []string{
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{\"a\""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"edit_plan","arguments":":1}"}}]}}]}`,
			},
			events: `start 0 a edit_plan|input 0 {"a":1}`,
			calls:  `[{"id":"a","type":"function","function":{"name":"edit_plan","arguments":"{\"a\":1}"}}]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []string
			a := &assembler{on: func(e Event) error {
				switch e.Kind {
				case EventToolStart:
					events = append(events, fmt.Sprintf("start %d %s %s", e.Index, e.ID, e.Name))
				case EventToolInput:
					// Merge consecutive pieces of one call, as they are one input.
					last := fmt.Sprintf("input %d ", e.Index)
					if n := len(events); n > 0 && strings.HasPrefix(events[n-1], last) {
						events[n-1] += e.Delta
					} else {
						events = append(events, last+e.Delta)
					}
				default:
					events = append(events, fmt.Sprintf("kind %d %q", e.Kind, e.Delta))
				}
				return nil
			}}
			for _, c := range tc.chunks {
				if err := a.chunk([]byte(c)); err != nil {
					t.Fatal(err)
				}
			}
			calls, _ := json.Marshal(a.completion().ToolCalls)
			if got := strings.Join(events, "|"); got != tc.events {
				t.Errorf("events\n got %s\nwant %s", got, tc.events)
			}
			if string(calls) != tc.calls {
				t.Errorf("calls\n got %s\nwant %s", calls, tc.calls)
			}
		})
	}
}

func TestReasoningFields(t *testing.T) {
	var got []string
	a := &assembler{on: func(e Event) error {
		got = append(got, fmt.Sprintf("%d:%s", e.Kind, e.Delta))
		return nil
	}}
	for _, c := range []string{
		`{"choices":[{"delta":{"reasoning_content":"a"}}]}`, // llama.cpp, vLLM
		`{"choices":[{"delta":{"reasoning":"b"}}]}`,         // Ollama
		`{"choices":[{"delta":{"reasoning_content":"c","reasoning":"c"}}]}`,
		`{"choices":[{"delta":{"content":"d"}}]}`,
		`{"choices":[{"delta":{"content":null}}]}`,
	} {
		if err := a.chunk([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{"1:a", "1:b", "1:c", "0:d"}) {
		t.Errorf("events = %q", got)
	}
}

func TestErrorText(t *testing.T) {
	for in, want := range map[string]string{
		`{"error":{"message":"model not found","type":"invalid_request_error"}}`: "model not found",
		`{"error":"model not found"}`:                                            "model not found",
		`{"message":"model not found"}`:                                          "model not found",
		"Bad Gateway\n":                                                          "Bad Gateway",
	} {
		if got := errorText([]byte(in)); got != want {
			t.Errorf("errorText(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestStatusErrorWords(t *testing.T) {
	const base = "http://127.0.0.1:11434/v1"
	for _, tc := range []struct {
		err  StatusError
		want string
	}{
		{StatusError{Status: 401, NoKey: true}, "The model server at " + base + " needs an API key (HTTP 401). Set OPENAI_API_KEY to one it accepts."},
		{StatusError{Status: 401, Message: "Incorrect API key provided."}, "The model server at " + base + " refused the API key in OPENAI_API_KEY (HTTP 401): Incorrect API key provided."},
		{StatusError{Status: 429, Message: "slow down"}, "The model server at " + base + " is rate limiting (HTTP 429): slow down. Try again in a moment."},
		{StatusError{Status: 502}, "The model server at " + base + " answered HTTP 502."},
	} {
		tc.err.BaseURL = base
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestNewModelServerURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:11434/v1":      "http://127.0.0.1:11434/v1",
		"http://127.0.0.1:11434/v1/":     "http://127.0.0.1:11434/v1",
		"http://localhost:1234":          "http://localhost:1234/v1",
		"https://api.groq.com/openai/v1": "https://api.groq.com/openai/v1",
	} {
		s, err := NewModelServer(in, "", nil)
		if err != nil || s.BaseURL() != want {
			t.Errorf("NewModelServer(%q) = %v, %v; want %s", in, s, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:11434", "ftp://x/v1", "http://user:pw@host/v1"} {
		if _, err := NewModelServer(bad, "", nil); err == nil {
			t.Errorf("NewModelServer(%q) accepted", bad)
		}
	}
	s, _ := NewModelServer(DefaultBaseURL, "sk-secret", nil)
	if strings.Contains(fmt.Sprintf("%v %+v %s", s, s, s), "sk-secret") {
		t.Error("printing a ModelServer shows its key")
	}
}

func TestUnifiedReason(t *testing.T) {
	for raw, want := range map[string]string{
		"stop": "stop", "length": "length", "tool_calls": "tool-calls", "function_call": "tool-calls",
		"content_filter": "content-filter", "": "other", "eos": "other",
	} {
		if got := unifiedReason(raw); got != want {
			t.Errorf("unifiedReason(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestCallIDUsedOnce(t *testing.T) {
	e := &emitter{used: map[string]bool{}}
	got := []string{e.callID("call_0"), e.callID("call_0"), e.callID(""), e.callID(strings.Repeat("x", 129))}
	seen := map[string]bool{}
	for _, id := range got {
		if id == "" || seen[id] {
			t.Fatalf("ids %q repeat or are empty", got)
		}
		seen[id] = true
	}
	if got[0] != "call_0" {
		t.Errorf("the model's own id was not kept: %q", got)
	}
}

func TestResponseFormat(t *testing.T) {
	if got := responseFormat("text", nil, "", ""); got != nil {
		t.Errorf("text: %s", got)
	}
	if got := string(responseFormat("json", nil, "", "")); got != `{"type":"json_object"}` {
		t.Errorf("json without schema: %s", got)
	}
	got := string(responseFormat("json", json.RawMessage(`{"type":"object"}`), "plan title", "A title."))
	if want := `{"type":"json_schema","json_schema":{"name":"plan_title","description":"A title.","schema":{"type":"object"}}}`; got != want {
		t.Errorf("json with schema:\n got %s\nwant %s", got, want)
	}
}

// TestBuildCatalog is the capability catalog a Planner reports when the
// server grants capability-catalog.
func TestBuildCatalog(t *testing.T) {
	models := []Model{{ID: "qwen2.5"}, {ID: ""}, {ID: "gpt-oss:20b"}}
	got, _ := json.Marshal(BuildCatalog(models, []string{"low", "medium", "high"}, "gpt-oss:20b", "medium"))
	want := `{"models":{"available":[` +
		`{"id":"qwen2.5","name":"qwen2.5","thinkingLevels":["low","medium","high"],"inputTypes":["text"]},` +
		`{"id":"gpt-oss:20b","name":"gpt-oss:20b","thinkingLevels":["low","medium","high"],"inputTypes":["text"]}],` +
		`"default":{"id":"gpt-oss:20b","thinkingLevel":"medium"}}}`
	if string(got) != want {
		t.Errorf("catalog\n got %s\nwant %s", got, want)
	}
	got, _ = json.Marshal(BuildCatalog(nil, nil, "", "medium"))
	if string(got) != `{"models":{"available":[]}}` {
		t.Errorf("empty catalog: %s", got)
	}
	// It reports no runs and offers no previews or forks: it asks for none of those.
	for _, f := range implemented {
		if f == "run-stage-deltas" || f == "decision-option-previews" || f == "session-forks" {
			t.Errorf("the Planner asks for %s; ask only for features it implements", f)
		}
	}
}

func TestUnknownModelListIsBounded(t *testing.T) {
	var many []string
	for i := range 25 {
		many = append(many, fmt.Sprintf("m%d", i))
	}
	msg := (&UnknownModelError{Model: "x", Known: many}).Error()
	if !strings.HasSuffix(msg, "m19 and 5 more.") {
		t.Errorf("message = %s", msg)
	}
	var ue *UnknownModelError
	if !errors.As(error(&UnknownModelError{}), &ue) {
		t.Error("not an *UnknownModelError")
	}
}
