package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/textrule"
)

// Decoding a frame ("Frames"): its size and encoding, its "type", then the
// message of that type in one strict pass (strict.go) and its limits
// (validate.go). What is wrong with a frame is a MalformedError, whose
// reason the server sends back.

// errFrameTooLarge is returned for a frame over MaxFrameBytes.
var errFrameTooLarge = errors.New("the frame is larger than 2 MiB")

// MalformedError says why a frame is not a valid message.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return e.Reason }

func malformed(format string, args ...any) error {
	return &MalformedError{Reason: fmt.Sprintf(format, args...)}
}

// decodeMessage decodes the frame's object into an M and checks its limits.
func decodeMessage[M Message](d *decoder, c *codec) (Message, error) {
	m := new(M)
	if err := d.object(c, reflect.ValueOf(m).Elem(), "type"); err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	if v, ok := any(m).(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			return nil, &limitError{err}
		}
	}
	return *m, nil
}

// limitError is a message of the right shape that breaks a limit.
type limitError struct{ err error }

func (e *limitError) Error() string { return firstLine(e.err) }

// DecodeClientFrame decodes and validates one text frame a client sent to
// a server that granted it every feature.
func DecodeClientFrame(data []byte) (Message, error) {
	return decodeFrame(data, messageTypes().client, nil)
}

// DecodeGrantedClientFrame decodes one text frame a client sent, refusing
// with an UnofferedError a message of a feature granted does not hold, before
// its fields are read.
func DecodeGrantedClientFrame(data []byte, granted func(feature string) bool) (Message, error) {
	return decodeFrame(data, messageTypes().client, granted)
}

// DecodeServerFrame decodes and validates one text frame a server sent.
func DecodeServerFrame(data []byte) (Message, error) {
	return decodeFrame(data, messageTypes().server, nil)
}

// UnofferedError is returned for a message of a feature this server does
// not offer.
type UnofferedError struct{ Type string }

func (e *UnofferedError) Error() string {
	return fmt.Sprintf("%s belongs to a feature this server did not grant", e.Type)
}

// decodeFrame reads the frame's "type", which an encoder writes first, then
// decodes the whole frame into that message's type in one pass (strict.go).
// Whatever else is wrong with a frame that is not JSON, it is refused as not
// JSON: the check for that runs only once decoding has failed.
func decodeFrame(data []byte, types map[string]messageCodec, granted func(string) bool) (Message, error) {
	if len(data) > MaxFrameBytes {
		return nil, errFrameTooLarge
	}
	if err := textrule.Encoding(data); err != nil {
		// Never decoded: decoding would replace the bad bytes with U+FFFD.
		return nil, malformed("the frame %v", err)
	}
	refuse := func(err error) error {
		if !json.Valid(data) {
			return malformed("the frame is not one JSON value")
		}
		return err
	}
	d := decoder{data: data}
	d.skipSpace()
	if d.peek() != '{' {
		return nil, refuse(malformed("the frame is not a JSON object"))
	}
	at, found, err := d.member("type")
	switch {
	case err != nil:
		return nil, refuse(err)
	case !found:
		return nil, refuse(malformed("the message has no type"))
	case at == len(data) || data[at] != '"':
		return nil, refuse(malformed("type must be a string"))
	}
	typ, err := (&decoder{data: data, pos: at}).string()
	if err != nil {
		return nil, refuse(err)
	}
	mc, ok := types[typ]
	feature := ""
	if granted != nil {
		feature = clientMessageFeatures[typ]
	}
	if !ok || (feature != "" && !granted(feature)) {
		// The message is not decoded, but a repeated key still makes it
		// malformed rather than merely unknown or not granted.
		if key := d.repeatedKey(); key != "" {
			return nil, refuse(malformed("the message repeats the field %q", key))
		}
		if ok {
			return nil, refuse(&UnofferedError{typ})
		}
		return nil, refuse(malformed("%q is not a message type of %s", truncateRunes(typ, MaxNameChars), Subprotocol))
	}
	m, err := mc.decode(&d, mc.codec)
	if err != nil {
		return nil, refuse(&MalformedError{Reason: typ + ": " + err.Error()})
	}
	return m, nil
}

// DecodeStrict decodes raw into v (a pointer) with the same shape rules as
// a frame, for wire values kept outside a frame (a stored hold).
func DecodeStrict(raw []byte, v any) error {
	if !utf8.Valid(raw) {
		return errors.New("not valid UTF-8")
	}
	rv := reflect.ValueOf(v).Elem()
	d := decoder{data: raw}
	d.skipSpace()
	if err := d.value(codecFor(rv.Type()), rv); err != nil {
		return err
	}
	return d.end()
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

type variantKey struct {
	name     string
	optional bool
}

// variant is implemented, with a value receiver, by a flat struct whose
// fields depend on the value of its discriminator field.
type variant interface {
	variantKeys() (discriminator string, keys map[string][]variantKey)
}

var variantType = reflect.TypeFor[variant]()

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
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		// Keys are the tables' plain names: they need no escaping.
		b.WriteByte('"')
		b.WriteString(k)
		b.WriteString(`":`)
		return encodeJSON(&b, fv.Interface())
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

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
