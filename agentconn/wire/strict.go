package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Strict decoding. encoding/json is too lenient for the spec's "objects are
// strict": it matches keys case-insensitively, keeps the last of two duplicate
// keys, reads null into anything and ignores missing fields, and
// DisallowUnknownFields mends only the first of these. Checking the shape
// first and unmarshalling after reads every frame twice, and for a text-delta
// part the reading is most of what the server does. So frames are decoded
// here, in one pass: each Go type's shape is compiled once into a codec (exact
// keys, no duplicates, every field without omitempty present, no null, whole
// numbers where ints are declared, the keys a variant's discriminator allows)
// and the decoder checks it while it fills the value. Limits are checked
// after, by each message's validate method.
//
// A value decodes to what encoding/json would give, with one difference: a
// json.RawMessage is kept without insignificant whitespace, the form Encode
// writes, so a decoded message encodes and decodes to itself.

type codecKind uint8

const (
	kindRaw codecKind = iota // json.RawMessage: any JSON value
	kindString
	kindBool
	kindInt
	kindPointer
	kindSlice
	kindStruct
)

// codec is the compiled shape of one Go type.
type codec struct {
	kind codecKind
	typ  reflect.Type
	elem *codec // pointer and slice

	// A struct: its fields, and the keys an object may and must have, a
	// bit per field; a variant has its own for each discriminator value.
	fields  []codecField
	keys    keyMasks
	variant *variantCodec
}

type codecField struct {
	name  string
	index int // in the Go struct
	codec *codec
	// trueOnly marks a bool the spec allows only as true, with the struct
	// tag wire:"true": present, it must be true (stagesDelta).
	trueOnly bool
}

type keyMasks struct{ allowed, required uint64 }

// variantCodec holds the keys an object may and must have for each value of
// its discriminator (see variant).
type variantCodec struct {
	disc  int // index in codec.fields
	masks map[string]keyMasks
}

var codecs sync.Map // reflect.Type -> *codec

func codecFor(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	c, _ := codecs.LoadOrStore(t, compile(t, map[reflect.Type]*codec{}))
	return c.(*codec)
}

// compile builds t's codec. building holds the codecs under construction, so
// a type that contains itself compiles.
func compile(t reflect.Type, building map[reflect.Type]*codec) *codec {
	if c := building[t]; c != nil {
		return c
	}
	c := &codec{typ: t}
	building[t] = c
	switch k := t.Kind(); {
	case t == rawMessageType:
		c.kind = kindRaw
	case k == reflect.String:
		c.kind = kindString
	case k == reflect.Bool:
		c.kind = kindBool
	case k == reflect.Int || k == reflect.Int64:
		c.kind = kindInt
	case k == reflect.Pointer:
		c.kind, c.elem = kindPointer, compile(t.Elem(), building)
	case k == reflect.Slice:
		c.kind, c.elem = kindSlice, compile(t.Elem(), building)
	case k == reflect.Struct:
		c.kind = kindStruct
		compileStruct(c, t, building)
	default:
		panic("agentconn: the wire has no type " + t.String())
	}
	return c
}

func compileStruct(c *codec, t reflect.Type, building map[reflect.Type]*codec) {
	at := map[string]int{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		bit := uint64(1) << len(c.fields)
		at[name] = len(c.fields)
		c.fields = append(c.fields, codecField{name: name, index: i, codec: compile(sf.Type, building),
			trueOnly: sf.Tag.Get("wire") == "true"})
		c.keys.allowed |= bit
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			c.keys.required |= bit
		}
	}
	if len(c.fields) > 64 {
		panic("agentconn: " + t.String() + " has more than 64 fields")
	}
	if !t.Implements(variantType) {
		return
	}
	disc, table := reflect.Zero(t).Interface().(variant).variantKeys()
	vc := &variantCodec{disc: at[disc], masks: map[string]keyMasks{}}
	for value, keys := range table {
		m := keyMasks{allowed: 1 << vc.disc, required: 1 << vc.disc}
		for _, k := range keys {
			i, ok := at[k.name]
			if !ok {
				panic("agentconn: " + t.String() + " has no field " + k.name)
			}
			m.allowed |= 1 << i
			if !k.optional {
				m.required |= 1 << i
			}
		}
		vc.masks[value] = m
	}
	c.variant = vc
}

// field returns the index of the field named key, or -1.
func (c *codec) field(key []byte) int {
	for i := range c.fields {
		if c.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

// errSyntax is bytes that are not JSON; decodeFrame says so in its own words.
var errSyntax = errors.New("the value is not JSON")

// shapeError is JSON that does not have its Go type's shape. Its path grows
// as the error returns through the objects and arrays that hold the value, so
// a frame that decodes builds no paths.
type shapeError struct {
	path []string // innermost first, each ".key" or "[index]"
	msg  string
}

func shapeErr(format string, args ...any) *shapeError {
	return &shapeError{msg: fmt.Sprintf(format, args...)}
}

func (e *shapeError) Error() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteString(e.path[i])
	}
	at := strings.TrimPrefix(b.String(), ".")
	if at == "" {
		at = "the message"
	}
	return at + " " + e.msg
}

// within adds the key or index that holds the value to a shapeError.
func within(err error, step string) error {
	if e, ok := err.(*shapeError); ok {
		e.path = append(e.path, step)
	}
	return err
}

// maxDepth is encoding/json's nesting limit, so nothing json.Valid refuses
// is accepted here.
const maxDepth = 10000

// decoder reads one JSON text. A method that reads a value starts at its
// first byte and leaves pos just after it.
type decoder struct {
	data  []byte
	pos   int
	depth int // objects and arrays open
}

// value reads one value into v, whose type c describes.
func (d *decoder) value(c *codec, v reflect.Value) error {
	if c.kind == kindRaw {
		start := d.pos
		if err := d.skip(); err != nil {
			return err
		}
		v.SetBytes(compact(d.data[start:d.pos]))
		return nil
	}
	if d.literal("null") {
		return shapeErr("cannot be null")
	}
	switch c.kind {
	case kindString:
		if d.peek() != '"' {
			return shapeErr("must be a string")
		}
		s, err := d.string()
		if err != nil {
			return err
		}
		v.SetString(s)
	case kindBool:
		switch {
		case d.literal("true"):
			v.SetBool(true)
		case d.literal("false"):
			v.SetBool(false)
		default:
			return shapeErr("must be true or false")
		}
	case kindInt:
		start := d.pos
		if d.number() != nil {
			return shapeErr("must be a whole number")
		}
		n, err := strconv.ParseInt(string(d.data[start:d.pos]), 10, 64)
		if err != nil || v.OverflowInt(n) {
			return shapeErr("must be a whole number")
		}
		v.SetInt(n)
	case kindPointer:
		p := reflect.New(c.elem.typ)
		if err := d.value(c.elem, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case kindSlice:
		return d.array(c, v)
	case kindStruct:
		if d.peek() != '{' {
			return shapeErr("must be an object")
		}
		return d.object(c, v, "")
	}
	return nil
}

func (d *decoder) array(c *codec, v reflect.Value) error {
	if d.peek() != '[' {
		return shapeErr("must be an array")
	}
	if err := d.enter(); err != nil {
		return err
	}
	// As encoding/json does, [] is an empty slice, not nil.
	v.Set(reflect.MakeSlice(c.typ, 0, 0))
	d.skipSpace()
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for n := 0; ; n++ {
		d.skipSpace()
		v.Grow(1)
		v.SetLen(n + 1)
		if err := d.value(c.elem, v.Index(n)); err != nil {
			return within(err, "["+strconv.Itoa(n)+"]")
		}
		d.skipSpace()
		switch d.next() {
		case ',':
		case ']':
			d.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// object reads an object into the struct v. extra is a key the caller has
// read already (the frame's "type"): it is skipped, once.
func (d *decoder) object(c *codec, v reflect.Value, extra string) error {
	keys := c.keys
	if vc := c.variant; vc != nil {
		disc := c.fields[vc.disc].name
		value, err := d.discriminator(disc)
		if err != nil {
			return err
		}
		m, ok := vc.masks[value]
		if !ok {
			return within(shapeErr("%q is not one this protocol knows", truncateRunes(value, MaxNameChars)), "."+disc)
		}
		keys = m
	}
	if err := d.enter(); err != nil {
		return err
	}
	var seen uint64
	extraSeen := false
	d.skipSpace()
	more := d.peek() != '}'
	if !more {
		d.pos++
	}
	for more {
		d.skipSpace()
		key, err := d.key()
		if err != nil {
			return err
		}
		switch i := c.field(key); {
		case extra != "" && string(key) == extra:
			if extraSeen {
				return shapeErr("repeats the field %q", key)
			}
			extraSeen = true
			if err := d.skip(); err != nil {
				return err
			}
		case i < 0 || keys.allowed&(1<<i) == 0:
			return within(shapeErr("is not a field of this message"), "."+string(key))
		case seen&(1<<i) != 0:
			return shapeErr("repeats the field %q", key)
		default:
			seen |= 1 << i
			f := &c.fields[i]
			fv := v.Field(f.index)
			if err := d.value(f.codec, fv); err != nil {
				return within(err, "."+f.name)
			}
			if f.trueOnly && !fv.Bool() {
				return within(shapeErr("is always true; leave it out instead"), "."+f.name)
			}
		}
		d.skipSpace()
		switch d.next() {
		case ',':
		case '}':
			more = false
		default:
			return errSyntax
		}
	}
	d.depth--
	if missing := keys.required &^ seen; missing != 0 {
		return within(shapeErr("is missing"), "."+c.fields[bits.TrailingZeros64(missing)].name)
	}
	return nil
}

// key reads a member's key and its colon.
func (d *decoder) key() ([]byte, error) {
	if d.peek() != '"' {
		return nil, errSyntax
	}
	key, err := d.stringBytes()
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.next() != ':' {
		return nil, errSyntax
	}
	d.skipSpace()
	return key, nil
}

// discriminator is the string value of the object's member named key, or ""
// when it has none or it is not a string.
func (d *decoder) discriminator(key string) (string, error) {
	at, found, err := d.member(key)
	if err != nil || !found || at == len(d.data) || d.data[at] != '"' {
		return "", err
	}
	return (&decoder{data: d.data, pos: at}).string()
}

// member finds where the value of the object's first member named key
// starts. This package's encoder writes a discriminator first, so member
// rarely reads past it.
func (d decoder) member(key string) (at int, found bool, err error) {
	err = d.members(func(k []byte, pos int) bool {
		if string(k) == key {
			at, found = pos, true
		}
		return !found
	})
	return at, found, err
}

// members calls visit with each key of the object at pos and where its value
// starts, until visit returns false. It does not move d.
func (d decoder) members(visit func(key []byte, at int) bool) error {
	if err := d.enter(); err != nil {
		return err
	}
	d.skipSpace()
	if d.peek() == '}' {
		return nil
	}
	for {
		d.skipSpace()
		k, err := d.key()
		if err != nil {
			return err
		}
		if !visit(k, d.pos) {
			return nil
		}
		if err := d.skip(); err != nil {
			return err
		}
		d.skipSpace()
		switch d.next() {
		case ',':
		case '}':
			return nil
		default:
			return errSyntax
		}
	}
}

// enter steps into the object or array at pos.
func (d *decoder) enter() error {
	d.pos++
	d.depth++
	if d.depth > maxDepth {
		return errSyntax
	}
	return nil
}

func (d *decoder) string() (string, error) {
	b, err := d.stringBytes()
	return string(b), err
}

// stringBytes reads a string: a slice of data when it has no escapes, else
// a copy with them undone.
func (d *decoder) stringBytes() ([]byte, error) {
	start := d.pos + 1
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return d.data[start:i], nil
		case c == '\\':
			if err := d.skipString(); err != nil {
				return nil, err
			}
			return unescape(d.data[start : d.pos-1]), nil
		case c < 0x20:
			return nil, errSyntax
		}
	}
	return nil, errSyntax
}

// unescaped is what each one-letter escape stands for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescape undoes the escapes of a valid string's body as encoding/json
// does: a \u escape of a surrogate that is not half of a pair is U+FFFD.
func unescape(s []byte) []byte {
	buf := make([]byte, 0, len(s)) // escapes only ever shrink
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(buf, s...)
		}
		buf, s = append(buf, s[:i]...), s[i:]
		if s[1] != 'u' {
			buf, s = append(buf, unescaped[s[1]]), s[2:]
			continue
		}
		r := hex4(s)
		s = s[6:]
		if utf16.IsSurrogate(r) {
			if pair := utf16.DecodeRune(r, hex4(s)); pair != utf8.RuneError {
				r, s = pair, s[6:]
			} else {
				r = utf8.RuneError
			}
		}
		buf = utf8.AppendRune(buf, r)
	}
}

// hex4 reads the \uXXXX escape at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// skip reads over one value, checking that it is JSON.
func (d *decoder) skip() error {
	switch d.peek() {
	case '"':
		return d.skipString()
	case '{', '[':
		return d.skipContainer()
	case 't', 'f', 'n':
		if d.literal("true") || d.literal("false") || d.literal("null") {
			return nil
		}
		return errSyntax
	}
	return d.number()
}

func (d *decoder) skipString() error {
	for i := d.pos + 1; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return nil
		case c < 0x20:
			return errSyntax
		case c == '\\':
			if i+1 == len(d.data) {
				return errSyntax
			}
			switch d.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if hex4(d.data[i:]) < 0 {
					return errSyntax
				}
				i += 5
			default:
				return errSyntax
			}
		}
	}
	return errSyntax
}

func (d *decoder) skipContainer() error {
	end := byte('}')
	if d.peek() == '[' {
		end = ']'
	}
	if err := d.enter(); err != nil {
		return err
	}
	d.skipSpace()
	if d.peek() == end {
		d.pos++
		d.depth--
		return nil
	}
	for {
		d.skipSpace()
		if end == '}' {
			if _, err := d.key(); err != nil {
				return err
			}
		}
		if err := d.skip(); err != nil {
			return err
		}
		d.skipSpace()
		switch d.next() {
		case ',':
		case end:
			d.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// number reads a number as JSON writes one.
func (d *decoder) number() error {
	b, i := d.data, d.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return errSyntax
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(b, i+1); b[i-1] == '.' {
			return errSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return errSyntax
		}
		i = j
	}
	d.pos = i
	return nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// literal reads s if it comes next.
func (d *decoder) literal(s string) bool {
	if len(d.data)-d.pos >= len(s) && string(d.data[d.pos:d.pos+len(s)]) == s {
		d.pos += len(s)
		return true
	}
	return false
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// next reads the next byte, or returns 0 at the end.
func (d *decoder) next() byte {
	c := d.peek()
	d.pos++
	return c
}

// end checks that nothing but whitespace follows the value.
func (d *decoder) end() error {
	d.skipSpace()
	if d.pos != len(d.data) {
		return errSyntax
	}
	return nil
}

// compact copies a valid JSON value without the whitespace between tokens.
func compact(raw []byte) json.RawMessage {
	out := make(json.RawMessage, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			j := i + 1
			for raw[j] != '"' {
				if raw[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, raw[i:j+1]...)
			i = j
		default:
			out = append(out, c)
		}
	}
	return out
}

// repeatedKey returns the first key the object at pos repeats, if any.
func (d decoder) repeatedKey() (repeated string) {
	seen := map[string]bool{}
	_ = d.members(func(k []byte, _ int) bool {
		if seen[string(k)] {
			repeated = string(k)
		}
		seen[string(k)] = true
		return repeated == ""
	})
	return repeated
}
