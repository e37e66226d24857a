package wire

import (
	"encoding/json"
	"testing"
)

// The exact wire forms of the capability-catalog, steer-turn, retry-turn and
// attachments messages and fields.
func TestWireGoldenFeatures(t *testing.T) {
	tests := []struct {
		msg  Message
		wire string
	}{
		{Capabilities{Catalog: json.RawMessage(`{"models":{"available":[{"id":"m","name":"M","x":1}]}}`)},
			`{"type":"capabilities","catalog":{"models":{"available":[{"id":"m","name":"M","x":1}]}}}`},
		{Capabilities{Catalog: json.RawMessage(`{}`)}, `{"type":"capabilities","catalog":{}}`},
		{Steer{Request: "c1", Session: "s1", Turn: "t1", Prompt: "@bo: also <this>"},
			`{"type":"steer","request":"c1","session":"s1","turn":"t1","prompt":"@bo: also <this>"}`},
		{Turn{Session: "s2", Turn: "t2", Prompt: "@ana: Hey there!", Model: "m", ThinkingLevel: "xhigh",
			Attachments: []Attachment{{ID: "a1", Name: "notes.md", Kind: "file", MediaType: "text/plain", Size: 2, Data: "aGk="}},
			ChatMessage: "0f8c", Retry: true, Tools: []Tool{}},
			`{"type":"turn","session":"s2","turn":"t2","prompt":"@ana: Hey there!","model":"m","thinkingLevel":"xhigh","attachments":[{"id":"a1","name":"notes.md","kind":"file","mediaType":"text/plain","size":2,"data":"aGk="}],"message":"0f8c","retry":true,"tools":[]}`},
	}
	checkGolden(t, tests)
}
