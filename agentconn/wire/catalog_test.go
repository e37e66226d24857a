package wire

import (
	"encoding/json"
	"reflect"
	"strings"
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

// A catalog is read as written: any spelling and length, unknown fields kept,
// repeated entries kept in order; empty ids and levels skipped; only a wrong
// type is malformed.
func TestParseCatalog(t *testing.T) {
	long := strings.Repeat("m", 5000)
	raw := `{"models":{"available":[
		{"id":"` + long + `","name":"","provider":{"id":"p"},"thinkingLevels":["extra high","低","","High","high"],"inputTypes":["text","image"],"future":1},
		{"id":"","name":"nobody can ask for me"},
		{"id":"a","name":"A1"},{"id":"a","name":"A2"}],
		"default":{"id":"a","thinkingLevel":""}},
		"commands":[{"name":"review","kind":"skill"},{"name":"review","kind":"skill"},{"name":"","kind":""}],
		"later":{"x":[1,2]}}`
	c, err := ParseCatalog(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Models.Available); got != 3 {
		t.Fatalf("models %d, want 3 (the empty id skipped)", got)
	}
	m := c.Models.Available[0]
	if m.ID != long || !reflect.DeepEqual(m.ThinkingLevels, []string{"extra high", "低", "High", "high"}) || !m.Reads("image") || m.Provider.ID != "p" {
		t.Fatalf("first model %+v", m)
	}
	if a, _ := c.Model("a"); a.Name != "A1" {
		t.Fatalf("a choice of a repeated id is the first entry's, got %q", a.Name)
	}
	if c.Models.Default == nil || c.Models.Default.ID != "a" || c.Models.Default.ThinkingLevel != "" {
		t.Fatalf("default %+v", c.Models.Default)
	}
	if len(c.Commands) != 3 || c.Commands[2].Name != "" {
		t.Fatalf("commands %+v", c.Commands)
	}
	if string(c.Raw) != raw || len(c.Skipped) != 3 {
		t.Fatalf("raw kept %v, skipped %q", string(c.Raw) == raw, c.Skipped)
	}
	if c, err := ParseCatalog(json.RawMessage(`{"models":{"available":[],"default":{"id":""}}}`)); err != nil || c.Models.Default != nil {
		t.Fatalf("empty default: %+v %v", c.Models, err)
	}
	if c, err := ParseCatalog(json.RawMessage(`{}`)); err != nil || c.Models != nil || c.Commands != nil {
		t.Fatalf("{} withdraws everything: %+v %v", c, err)
	}

	for _, bad := range []string{
		`[]`, `"x"`, `{"models":[]}`, `{"models":{"available":{}}}`, `{"models":{"available":[1]}}`,
		`{"models":{"available":[{"id":1,"name":"x"}]}}`, `{"models":{"available":[{"id":"x","thinkingLevels":"high"}]}}`,
		`{"models":{"available":[{"id":"x","thinkingLevels":[1]}]}}`, `{"models":{"available":[{"id":"x","provider":"p"}]}}`,
		`{"models":{"default":{"id":2}}}`, `{"commands":{}}`, `{"commands":[{"name":1,"kind":"skill"}]}`,
	} {
		if _, err := ParseCatalog(json.RawMessage(bad)); err == nil {
			t.Errorf("ParseCatalog(%s) accepted a wrong type", bad)
		}
	}
}
