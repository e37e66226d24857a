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

	"github.com/santhosh-tekuri/jsonschema/v6"
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
// JSON when schema is empty), with an error the person can read.
func checkJSON(text string, schema json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
	if err != nil {
		return fmt.Errorf("The model answered with text that is not the JSON this turn asked for.")
	}
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("The turn's JSON schema could not be read: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{}) // a schema never reads files or the network
	if err := c.AddResource("turn.json", doc); err != nil {
		return fmt.Errorf("The turn's JSON schema could not be read: %v", err)
	}
	sch, err := c.Compile("turn.json")
	if err != nil {
		return fmt.Errorf("The turn's JSON schema could not be compiled: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("The model's JSON does not fit the schema this turn asked for.")
	}
	return nil
}

// noLoader refuses every reference outside the schema itself.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s, which is not loaded", url)
}
