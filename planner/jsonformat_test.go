package planner

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkJSON holds a JSON-mode answer to the turn's schema.
func TestCheckJSON(t *testing.T) {
	const schema = `{"type":"object","properties":{"description":{"type":"string","maxLength":10}},"required":["description"],"additionalProperties":false}`
	tests := []struct {
		text, schema, err string // err: a part of the error, "" when it fits
	}{
		{`{"description":"short"}`, schema, ""},
		{` {"description":"short"} ` + "\n", schema, ""},
		{`{"description":"far too long a text"}`, schema, "does not fit the schema"},
		{`{"description":1}`, schema, "does not fit the schema"},
		{`{}`, schema, "does not fit the schema"},
		{`{"description":"a","other":1}`, schema, "does not fit the schema"},
		{`{"description":"a"} {"description":"b"}`, schema, "not the JSON"},
		{`{"description":"a"} trailing`, schema, "not the JSON"},
		{`Sure! {"description":"a"}`, schema, "not the JSON"},
		{``, schema, "not the JSON"},
		{`[1, 2]`, ``, ""},
		{`[1, 2`, ``, "not the JSON"},
		{`{"a":1}`, `{"$ref":"https://example.com/schema.json"}`, "could not be compiled"},
		{`{"a":1}`, `{"type":`, "could not be read"},
		{`{"n":"x"}`, `{"$defs":{"s":{"type":"string"}},"type":"object","properties":{"n":{"$ref":"#/$defs/s"}}}`, ""},
		{`{"n":1}`, `{"$defs":{"s":{"type":"string"}},"type":"object","properties":{"n":{"$ref":"#/$defs/s"}}}`, "does not fit the schema"},
		{`{"n":1}`, `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"n":{"$ref":"#/definitions/s"}}}`, "does not fit the schema"},
	}
	for _, tt := range tests {
		err := checkJSON(tt.text, json.RawMessage(tt.schema))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("checkJSON(%q, %s) = %v, want it to fit", tt.text, tt.schema, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("checkJSON(%q, %s) = %v, want an error saying %q", tt.text, tt.schema, err, tt.err)
		}
	}
}
