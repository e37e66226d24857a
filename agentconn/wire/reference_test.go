package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// The two-pass decoder this package had before strict.go: a shape check over
// json.Decoder tokens, then json.Unmarshal. It is kept as the oracle
// FuzzDecoderAgainstReference holds the one-pass decoder to, unchanged but for
// its names and one fix the fuzzer found: it let a nested object have a key
// "" of any value, taking it for the caller's "extra" key.

var refClientMessages = refRegistry(Attach{}, Started{}, StartFailed{}, Tools{}, Part{}, HostToolCall{},
	TurnEnd{}, InputRequest{}, InputCancel{}, Runs{}, ControlResult{}, Detach{},
	Capabilities{}, ResumeSessions{}, InputReceived{})

var refServerMessages = refRegistry(Attached{}, Refused{}, Start{}, Turn{}, Abort{}, HostToolResult{},
	InputResult{}, Stop{}, Resume{}, Destroy{}, ProtocolError{}, Steer{}, Fork{}, Resumed{}, Restarting{})

// refClientFeatures is the feature of each client message that has one:
// a message of a feature not granted is refused as such before its fields
// are read.
var refClientFeatures = map[string]string{
	"capabilities": "capability-catalog", "resume": "resumable-sessions", "input-received": "resumable-sessions",
}

func refRegistry(ms ...Message) map[string]reflect.Type {
	r := make(map[string]reflect.Type, len(ms))
	for _, m := range ms {
		r[m.MessageType()] = reflect.TypeOf(m)
	}
	return r
}

func refDecodeFrame(data []byte, types map[string]reflect.Type, granted func(string) bool) (Message, error) {
	if len(data) > MaxFrameBytes {
		return nil, errFrameTooLarge
	}
	if !utf8.Valid(data) {
		return nil, malformed("the frame is not valid UTF-8")
	}
	if !json.Valid(data) {
		return nil, malformed("the frame is not one JSON value")
	}
	members, err := refObjectMembers(data)
	var dup *refDuplicateError
	switch {
	case errors.As(err, &dup):
		return nil, malformed("the message %v", dup)
	case err != nil:
		return nil, malformed("the frame is not a JSON object")
	}
	var typ string
	found := false
	for _, m := range members {
		if m.key == "type" {
			if json.Unmarshal(m.value, &typ) != nil || m.value[0] != '"' {
				return nil, malformed("type must be a string")
			}
			found = true
		}
	}
	if !found {
		return nil, malformed("the message has no type")
	}
	t, ok := types[typ]
	if !ok {
		return nil, malformed("%q is not a message type of %s", truncateRunes(typ, MaxNameChars), Subprotocol)
	}
	if f := refClientFeatures[typ]; f != "" && granted != nil && !granted(f) {
		return nil, &UnofferedError{typ}
	}
	if err := refCheckObject(members, t, "", "type"); err != nil {
		return nil, &MalformedError{Reason: typ + ": " + err.Error()}
	}
	v := reflect.New(t)
	if err := json.Unmarshal(data, v.Interface()); err != nil {
		return nil, malformed("%s: %v", typ, err)
	}
	if val, ok := v.Interface().(interface{ validate() error }); ok {
		if err := val.validate(); err != nil {
			return nil, &MalformedError{Reason: typ + ": " + firstLine(err)}
		}
	}
	return v.Elem().Interface().(Message), nil
}

type refMember struct {
	key   string
	value json.RawMessage
}

// refObjectMembers splits a JSON object into its members, refusing duplicates.
func refObjectMembers(raw []byte) ([]refMember, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("must be an object")
	}
	var ms []refMember
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, &refDuplicateError{key}
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, refMember{key, v})
	}
	return ms, nil
}

func refArrayElements(raw []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errors.New("must be an array")
	}
	var es []json.RawMessage
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		es = append(es, v)
	}
	return es, nil
}

type refDuplicateError struct{ key string }

func (e *refDuplicateError) Error() string { return fmt.Sprintf("repeats the field %q", e.key) }

// refCheckShape checks one JSON value against Go type t.
func refCheckShape(raw []byte, t reflect.Type, path string) error {
	if t == rawMessageType {
		return nil // any JSON; the frame as a whole is already valid
	}
	if bytes.Equal(raw, []byte("null")) {
		return fmt.Errorf("%s cannot be null", refName(path))
	}
	switch t.Kind() {
	case reflect.Pointer:
		return refCheckShape(raw, t.Elem(), path)
	case reflect.String:
		if raw[0] != '"' {
			return fmt.Errorf("%s must be a string", refName(path))
		}
	case reflect.Bool:
		if s := string(raw); s != "true" && s != "false" {
			return fmt.Errorf("%s must be true or false", refName(path))
		}
	case reflect.Int, reflect.Int64:
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			return fmt.Errorf("%s must be a whole number", refName(path))
		}
	case reflect.Slice:
		es, err := refArrayElements(raw)
		if err != nil {
			return fmt.Errorf("%s must be an array", refName(path))
		}
		for i, e := range es {
			if err := refCheckShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		ms, err := refObjectMembers(raw)
		if err != nil {
			return fmt.Errorf("%s %v", refName(path), err)
		}
		return refCheckObject(ms, t, path, "")
	default:
		return fmt.Errorf("%s has a type the decoder does not know", refName(path))
	}
	return nil
}

// refCheckObject checks an object's members against struct type t; extra names
// a key the caller already checked (the message's "type").
func refCheckObject(ms []refMember, t reflect.Type, path, extra string) error {
	fields := fieldsOf(t)
	allowed := map[string]bool{}
	var required []string
	if reflect.PointerTo(t).Implements(variantType) || t.Implements(variantType) {
		disc, table := reflect.Zero(t).Interface().(variant).variantKeys()
		var value string
		for _, m := range ms {
			if m.key == disc {
				_ = json.Unmarshal(m.value, &value)
			}
		}
		keys, ok := table[value]
		if !ok {
			return fmt.Errorf("%s %q is not one this protocol knows", refName(refJoin(path, disc)), truncateRunes(value, MaxNameChars))
		}
		allowed[disc] = true
		required = append(required, disc)
		for _, k := range keys {
			allowed[k.name] = true
			if !k.optional {
				required = append(required, k.name)
			}
		}
	} else {
		for n, f := range fields {
			allowed[n] = true
			if f.required {
				required = append(required, n)
			}
		}
	}
	present := map[string]bool{}
	for _, m := range ms {
		if extra != "" && m.key == extra { // fixed: "" passed as the extra key
			continue
		}
		if !allowed[m.key] {
			return fmt.Errorf("%s is not a field of this message", refName(refJoin(path, m.key)))
		}
		present[m.key] = true
		if err := refCheckShape(m.value, fields[m.key].typ, refJoin(path, m.key)); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !present[r] {
			return fmt.Errorf("%s is missing", refName(refJoin(path, r)))
		}
	}
	return nil
}

func refJoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func refName(path string) string {
	if path == "" {
		return "the value"
	}
	return path
}
