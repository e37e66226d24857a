package room

import (
	"encoding/json"
	"testing"
)

// TestAskSchema pins the ask tool's input schema, whose questions the wire
// package generates from its limits, to the schema written out by hand
// before it did: the model reads the same schema, byte for byte.
func TestAskSchema(t *testing.T) {
	const want = `{"type":"object","required":["questions"],"properties":{` +
		`"questions":{"type":"array","minItems":1,"maxItems":16,"items":{"type":"object","required":["question","header","options"],"properties":{` +
		`"question":{"type":"string","maxLength":4000,"description":"Markdown: the first line is the heading, the rest the body."},` +
		`"header":{"type":"string","maxLength":128,"description":"A short tag for the card, such as Storage."},` +
		`"options":{"type":"array","maxItems":32,"items":{"type":"object","required":["label","description"],"properties":{` +
		`"label":{"type":"string","maxLength":4000},"description":{"type":"string","maxLength":4000}},"additionalProperties":false}},` +
		`"multiSelect":{"type":"boolean","description":"Let people choose several options."}` +
		`},"additionalProperties":false}},` +
		`"block":{"type":"object","required":["index","digest"],"properties":{` +
		`"index":{"type":"integer","minimum":0},"digest":{"type":"string","pattern":"^sha256:[0-9a-f]{64}$"}},"additionalProperties":false}` +
		`},"additionalProperties":false}`
	for _, tool := range HostTools {
		if tool.Name != ToolAsk {
			continue
		}
		if got := string(tool.InputSchema); got != want {
			t.Errorf("ask's schema\n got %s\nwant %s", got, want)
		}
		if !json.Valid(tool.InputSchema) {
			t.Error("ask's schema is not JSON")
		}
		return
	}
	t.Fatal("no ask tool")
}
