package planner

// A turn's responseFormat of type json (spec/agent-connection.md "Server to
// client"): the turn's text must be that JSON. The model server is asked for
// it through structured output (response_format json_schema); a server that
// refuses a schema is asked again in JSON mode, and the answer is then
// checked against the schema here, since JSON mode promises only JSON.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonModeFallback is the JSON-mode response_format to ask with again when
// the model server refused rf, a json_schema, with HTTP 400 or 422; nil when
// there is nothing to fall back to.
func jsonModeFallback(rf json.RawMessage, err error) json.RawMessage {
	var se *StatusError
	if err == nil || !errors.As(err, &se) || (se.Status != http.StatusBadRequest && se.Status != http.StatusUnprocessableEntity) {
		return nil
	}
	var f struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(rf, &f) != nil || f.Type != "json_schema" {
		return nil
	}
	return json.RawMessage(`{"type":"json_object"}`)
}

// checkJSON reports whether text is one JSON value that fits schema (any
// JSON when schema is empty), with an error the person can read. The
// validator is the JSON Schema package the MCP SDK already links (draft
// 2020-12 and draft-07), which does its work when called, not at start-up.
func checkJSON(text string, schema json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight([]byte(text), " \t\r\n"))) {
		return fmt.Errorf("The model answered with text that is not the JSON this turn asked for.")
	}
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return fmt.Errorf("The turn's JSON schema could not be read: %v", err)
	}
	// No loader: a schema never reads files or the network.
	rs, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: "urn:chopin:turn.json"})
	if err != nil {
		return fmt.Errorf("The turn's JSON schema could not be compiled: %v", err)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("The model's JSON does not fit the schema this turn asked for.")
	}
	return nil
}
