package agentconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Strict decoding. encoding/json alone is too lenient for the spec's "objects
// are strict": it matches keys case-insensitively, keeps the last of two
// duplicate keys, reads null into anything and ignores missing fields. So a
// frame is first checked against the shape its Go type declares (exact keys,
// no duplicates, every field without omitempty present, no null, integers
// where ints are declared), and only then unmarshalled, and then its limits
// are validated. A type whose fields depend on a discriminator (StreamPart,
// Input, QuestionAnswer) declares them with variantKeys.

// errFrameTooLarge is returned for a frame over MaxFrameBytes.
var errFrameTooLarge = errors.New("the frame is larger than 2 MiB")

// MalformedError says why a frame is not a valid message.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return e.Reason }

func malformed(format string, args ...any) error {
	return &MalformedError{Reason: fmt.Sprintf(format, args...)}
}

var clientMessages = registry(Attach{}, Started{}, StartFailed{}, Tools{}, Part{}, HostToolCall{},
	TurnEnd{}, InputRequest{}, InputCancel{}, Runs{}, ControlResult{}, Detach{})

var serverMessages = registry(Attached{}, Refused{}, Start{}, Turn{}, Abort{}, HostToolResult{},
	InputResult{}, Stop{}, Resume{}, Destroy{}, ProtocolError{})

// unofferedClientMessages are client messages of features this server does not
// offer yet; sending one is a protocol violation, not a malformed message.
var unofferedClientMessages = set("resume", "input-received", "capabilities")

func registry(ms ...Message) map[string]reflect.Type {
	r := make(map[string]reflect.Type, len(ms))
	for _, m := range ms {
		r[m.MessageType()] = reflect.TypeOf(m)
	}
	return r
}

// DecodeClientFrame decodes and validates one text frame a client sent.
func DecodeClientFrame(data []byte) (Message, error) { return decodeFrame(data, clientMessages) }

// DecodeServerFrame decodes and validates one text frame a server sent.
func DecodeServerFrame(data []byte) (Message, error) { return decodeFrame(data, serverMessages) }

// unofferedError is returned for a message of a feature this server does not offer.
type unofferedError struct{ typ string }

func (e *unofferedError) Error() string {
	return fmt.Sprintf("%s belongs to a feature this server did not grant", e.typ)
}

func decodeFrame(data []byte, types map[string]reflect.Type) (Message, error) {
	if len(data) > MaxFrameBytes {
		return nil, errFrameTooLarge
	}
	if !utf8.Valid(data) {
		return nil, malformed("the frame is not valid UTF-8")
	}
	if !json.Valid(data) {
		return nil, malformed("the frame is not one JSON value")
	}
	members, err := objectMembers(data)
	var dup *duplicateError
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
		if types[(Attach{}).MessageType()] != nil && unofferedClientMessages[typ] {
			return nil, &unofferedError{typ}
		}
		return nil, malformed("%q is not a message type of %s", truncateRunes(typ, maxName), Subprotocol)
	}
	if err := checkObject(members, t, "", "type"); err != nil {
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

// decodeStrict decodes raw into v (a pointer) with the same shape rules as a frame.
func decodeStrict(raw []byte, v any) error {
	t := reflect.TypeOf(v).Elem()
	if err := checkShape(raw, t, ""); err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members, refusing duplicates.
func objectMembers(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("must be an object")
	}
	var ms []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, &duplicateError{key}
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{key, v})
	}
	return ms, nil
}

func arrayElements(raw []byte) ([]json.RawMessage, error) {
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

type duplicateError struct{ key string }

func (e *duplicateError) Error() string { return fmt.Sprintf("repeats the field %q", e.key) }

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

type variantKey struct {
	name     string
	optional bool
}

// variant is implemented by a flat struct whose fields depend on the value of
// its discriminator field.
type variant interface {
	variantKeys() (discriminator string, keys map[string][]variantKey)
}

var variantType = reflect.TypeOf((*variant)(nil)).Elem()

func parseVariantTable(m map[string]string) map[string][]variantKey {
	out := make(map[string][]variantKey, len(m))
	for disc, keys := range m {
		list := []variantKey{}
		for _, k := range strings.Fields(keys) {
			name, opt := strings.CutSuffix(k, "?")
			list = append(list, variantKey{name, opt})
		}
		out[disc] = list
	}
	return out
}

// checkShape checks one JSON value against Go type t.
func checkShape(raw []byte, t reflect.Type, path string) error {
	if t == rawMessageType {
		return nil // any JSON; the frame as a whole is already valid
	}
	if bytes.Equal(raw, []byte("null")) {
		return fmt.Errorf("%s cannot be null", name(path))
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkShape(raw, t.Elem(), path)
	case reflect.String:
		if raw[0] != '"' {
			return fmt.Errorf("%s must be a string", name(path))
		}
	case reflect.Bool:
		if s := string(raw); s != "true" && s != "false" {
			return fmt.Errorf("%s must be true or false", name(path))
		}
	case reflect.Int, reflect.Int64:
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			return fmt.Errorf("%s must be a whole number", name(path))
		}
	case reflect.Slice:
		es, err := arrayElements(raw)
		if err != nil {
			return fmt.Errorf("%s must be an array", name(path))
		}
		for i, e := range es {
			if err := checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		ms, err := objectMembers(raw)
		if err != nil {
			return fmt.Errorf("%s %v", name(path), err)
		}
		return checkObject(ms, t, path, "")
	default:
		return fmt.Errorf("%s has a type the decoder does not know", name(path))
	}
	return nil
}

// checkObject checks an object's members against struct type t; extra names
// a key the caller already checked (the message's "type").
func checkObject(ms []member, t reflect.Type, path, extra string) error {
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
			return fmt.Errorf("%s %q is not one this protocol knows", name(join(path, disc)), truncateRunes(value, maxName))
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
		if m.key == extra {
			continue
		}
		if !allowed[m.key] {
			return fmt.Errorf("%s is not a field of this message", name(join(path, m.key)))
		}
		present[m.key] = true
		if err := checkShape(m.value, fields[m.key].typ, join(path, m.key)); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !present[r] {
			return fmt.Errorf("%s is missing", name(join(path, r)))
		}
	}
	return nil
}

type fieldInfo struct {
	index    int
	typ      reflect.Type
	required bool
}

var fieldCache sync.Map // reflect.Type -> map[string]fieldInfo

func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]fieldInfo)
	}
	fields := map[string]fieldInfo{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		n, opts, _ := strings.Cut(tag, ",")
		optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		fields[n] = fieldInfo{index: i, typ: sf.Type, required: !optional}
	}
	fieldCache.Store(t, fields)
	return fields
}

// marshalVariant writes the discriminator and then exactly the keys its value
// lists, leaving out optional ones that are zero.
func marshalVariant(v variant) ([]byte, error) {
	rv := reflect.ValueOf(v)
	fields := fieldsOf(rv.Type())
	disc, table := v.variantKeys()
	dv := rv.Field(fields[disc].index).String()
	keys, ok := table[dv]
	if !ok {
		return nil, fmt.Errorf("%s %q is not one this protocol knows", disc, dv)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(k string, fv reflect.Value) error {
		kb, _ := marshalJSON(k)
		vb, err := marshalJSON(fv.Interface())
		if err != nil {
			return err
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		return nil
	}
	// The discriminator goes first unless the table places it.
	if !slices.ContainsFunc(keys, func(k variantKey) bool { return k.name == disc }) {
		if err := write(disc, rv.Field(fields[disc].index)); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		fv := rv.Field(fields[k.name].index)
		if k.optional && fv.IsZero() {
			continue
		}
		if fv.Kind() == reflect.Slice && fv.IsNil() {
			fv = reflect.MakeSlice(fv.Type(), 0, 0) // a required list is [], never null
		}
		if fv.Type() == rawMessageType && fv.Len() == 0 {
			fv = reflect.ValueOf(json.RawMessage("null"))
		}
		if err := write(k.name, fv); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func name(path string) string {
	if path == "" {
		return "the value"
	}
	return path
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
