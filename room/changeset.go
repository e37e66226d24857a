package room

// This file is the server's copy of CodeMirror's ChangeSet (@codemirror/state):
// the JSON a browser pushes, applied to the plan text exactly as the browser's
// CodeMirror applies it, so that both hold the same text after every change.
// ui/scripts/changeset-fixtures.mjs records what the real library does and
// changeset_test.go replays it.
//
// Line endings. CodeMirror's Text has no line-ending characters of its own: it
// splits a string into lines on "\r\n", "\r" and "\n" and joins them with "\n".
// A browser that opened "a\r\nb" therefore counts 3 code units, not 4. The
// server keeps the text exactly as CodeMirror's Text.toString() would give it:
// any text that enters the server other than through a ChangeSet (an import,
// an HTTP PUT, the Planner's edit_plan) goes through NormalizeLineEndings
// first, and a ChangeSet whose inserted lines contain "\r" or "\n" is refused
// (CodeMirror never writes one: it splits inserted text into lines the same
// way). Positions then agree by construction.
//
// Positions and lengths are UTF-16 code units, as in JavaScript. A character
// outside the Basic Multilingual Plane (most emoji) counts two. Text is held
// as UTF-8, so a change boundary between the two halves of a surrogate pair
// cannot be represented and is refused.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

var (
	// ErrInvalidChangeSet is returned for JSON that is not a well-formed change
	// set, or one the server refuses to hold (see ParseChangeSet).
	ErrInvalidChangeSet = errors.New("invalid change set")
	// ErrWrongDocLength is returned by Apply when the change set was made for a
	// document of another length; CodeMirror throws "Applying change set to a
	// document with the wrong length" in the same case.
	ErrWrongDocLength = errors.New("applying change set to a document with the wrong length")
	// ErrSplitSurrogate is returned by Apply when a change starts or ends
	// between the two UTF-16 halves of one character.
	ErrSplitSurrogate = errors.New("change boundary inside a surrogate pair")
	// ErrInvalidUTF8 is returned by Apply for a document that is not valid
	// UTF-8: its UTF-16 length would be a guess.
	ErrInvalidUTF8 = errors.New("document is not valid UTF-8")
)

// maxLength bounds every length in a change set. JavaScript strings cannot be
// longer, and it keeps the sums within an int on every platform.
const maxLength = math.MaxInt32

// ChangeSet is a CodeMirror ChangeSet: a walk over the base document in
// sections, each keeping or replacing a run of it. The zero value is the empty
// change set of the empty document.
type ChangeSet struct {
	sections []section
	lenBase  int // UTF-16 length of the document the change set applies to
	lenAfter int // UTF-16 length of the document it produces
}

// section is one element of the JSON form: a number (kept), [len] (deleted) or
// [len, "line", ...] (replaced).
type section struct {
	len    int    // UTF-16 code units of the base document covered
	kept   bool   // whether those units are kept; if not, insert replaces them
	insert string // replacement text, lines joined with "\n"
}

// LenBase is the UTF-16 length of the document c applies to.
func (c ChangeSet) LenBase() int { return c.lenBase }

// LenAfter is the UTF-16 length of the document c produces.
func (c ChangeSet) LenAfter() int { return c.lenAfter }

func (c *ChangeSet) add(s section) {
	c.sections = append(c.sections, s)
	c.lenBase += s.len
	if s.kept {
		c.lenAfter += s.len
	} else {
		c.lenAfter += UTF16Len(s.insert)
	}
}

// ParseChangeSet decodes the JSON written by CodeMirror's ChangeSet.toJSON().
//
// It refuses, with an error wrapping ErrInvalidChangeSet, everything
// ChangeSet.fromJSON refuses and also what fromJSON would take but no
// CodeMirror editor writes: negative or fractional lengths, inserted lines
// holding a line break, and escaped halves of a surrogate pair (encoding/json
// would quietly turn those into U+FFFD, so the server's text would differ from
// the browser's).
func ParseChangeSet(data []byte) (ChangeSet, error) {
	var c ChangeSet
	err := c.UnmarshalJSON(data)
	return c, err
}

// UnmarshalJSON is ParseChangeSet, so a ChangeSet can be a field of a message.
// Unlike most unmarshalers it refuses null: a push without changes is malformed.
func (c *ChangeSet) UnmarshalJSON(data []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidChangeSet, err)
	}
	if parts == nil { // the JSON was null
		return fmt.Errorf("%w: not an array", ErrInvalidChangeSet)
	}
	var parsed ChangeSet
	parsed.sections = make([]section, 0, len(parts))
	for i, raw := range parts {
		s, err := parseSection(raw)
		if err != nil {
			return fmt.Errorf("%w: section %d: %v", ErrInvalidChangeSet, i, err)
		}
		parsed.add(s)
		if parsed.lenBase > maxLength || parsed.lenAfter > maxLength {
			return fmt.Errorf("%w: longer than %d code units", ErrInvalidChangeSet, maxLength)
		}
	}
	*c = parsed
	return nil
}

func parseSection(raw json.RawMessage) (section, error) {
	if raw[0] != '[' {
		n, err := parseLength(raw)
		return section{len: n, kept: true}, err
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return section{}, err
	}
	if len(elems) == 0 {
		return section{}, errors.New("empty array")
	}
	n, err := parseLength(elems[0])
	if err != nil {
		return section{}, err
	}
	lines := make([]string, len(elems)-1)
	for i, e := range elems[1:] {
		if e[0] != '"' {
			return section{}, fmt.Errorf("inserted line %d is not a string", i)
		}
		if hasLoneSurrogate(e) {
			return section{}, fmt.Errorf("inserted line %d holds half a surrogate pair", i)
		}
		if err := json.Unmarshal(e, &lines[i]); err != nil {
			return section{}, err
		}
		if strings.ContainsAny(lines[i], "\r\n") {
			return section{}, fmt.Errorf("inserted line %d contains a line break", i)
		}
	}
	return section{len: n, insert: strings.Join(lines, "\n")}, nil
}

// parseLength reads a section length. JavaScript has only one number type, so
// 1e3 and 2.0 are integers there and accepted here too.
func parseLength(raw json.RawMessage) (int, error) {
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, fmt.Errorf("%s is not a length", raw)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, err
	}
	switch {
	case f < 0:
		return 0, fmt.Errorf("negative length %s", raw)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("length %s is not an integer", raw)
	case f > maxLength:
		return 0, fmt.Errorf("length %s is too large", raw)
	}
	return int(f), nil
}

// hasLoneSurrogate reports whether the JSON string literal s has a \u escape
// of a high surrogate not followed by one of a low surrogate, or of a low
// surrogate on its own. s has already been checked to be valid JSON.
func hasLoneSurrogate(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if s[i] != 'u' {
			continue
		}
		r := hex4(s[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return true
			}
			if lo := hex4(s[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

func hex4(b []byte) uint64 {
	r, _ := strconv.ParseUint(string(b), 16, 16) // valid JSON: four hex digits
	return r
}

// MarshalJSON writes c as CodeMirror's ChangeSet.toJSON() would, byte for byte
// what JSON.stringify writes (so no escaping of <, >, & or U+2028). Inside a
// message, json.Marshal escapes <, > and & again; the meaning is the same.
func (c ChangeSet) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 16*len(c.sections)+2)
	b = append(b, '[')
	for i, s := range c.sections {
		if i > 0 {
			b = append(b, ',')
		}
		if s.kept {
			b = strconv.AppendInt(b, int64(s.len), 10)
			continue
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(s.len), 10)
		// CodeMirror writes an empty insertion as a plain deletion, [len].
		if s.insert != "" {
			for line := range strings.SplitSeq(s.insert, "\n") {
				b = append(b, ',')
				b = appendJSString(b, line)
			}
		}
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// appendJSString appends s quoted as JSON.stringify quotes it.
func appendJSString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b = append(b, '\\', byte(r))
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if r < 0x20 {
				b = fmt.Appendf(b, `\u%04x`, r)
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return append(b, '"')
}

// Apply returns doc with the changes made. doc must be the text the change set
// was made for: LenBase code units long, in CodeMirror's form (see
// NormalizeLineEndings).
func (c ChangeSet) Apply(doc string) (string, error) {
	text, _, err := c.applyKnown(doc, -1)
	return text, err
}

// editSpan is where a change set changed a text, in bytes: before From
// and after OldEnd (NewEnd in the new text) the two texts are the same.
type editSpan struct {
	From, OldEnd, NewEnd int
}

// applyKnown is Apply for a document whose UTF-16 length is known to be
// docUnits (-1 when it is not): the length is checked at once, and the
// kept text after the last change is copied without being scanned, which
// for a keystroke near the end of a large plan is nearly all of it. A
// document as long in code units as in bytes is ASCII, and its offsets are
// its code units: nothing is scanned at all. It also returns the span the
// changes touched.
func (c ChangeSet) applyKnown(doc string, docUnits int) (string, editSpan, error) {
	if docUnits >= 0 && docUnits != c.lenBase {
		return "", editSpan{}, c.wrongLength(docUnits)
	}
	ascii := docUnits == len(doc)
	var b strings.Builder
	// Room for every kept byte and every inserted one; deleted bytes, which
	// are not known before the scan, are the only waste.
	grow := len(doc)
	for _, s := range c.sections {
		grow += len(s.insert)
	}
	b.Grow(grow)

	span := editSpan{From: -1}
	pos, unit := 0, 0 // offsets in doc: bytes, UTF-16 code units
	for i, s := range c.sections {
		if docUnits >= 0 && s.kept && i == len(c.sections)-1 {
			// The lengths agree, so this is the rest of the document.
			b.WriteString(doc[pos:])
			pos = len(doc)
			break
		}
		end, err := pos+s.len, error(nil)
		if !ascii {
			end, err = advance(doc, pos, s.len)
		} else if end > len(doc) {
			end, err = len(doc), errPastEnd
		}
		if err != nil {
			// CodeMirror checks the length before anything else; so do we,
			// but only once we know something is wrong.
			if n := UTF16Len(doc); n != c.lenBase {
				return "", editSpan{}, c.wrongLength(n)
			}
			if err == ErrSplitSurrogate {
				return "", editSpan{}, fmt.Errorf("%w: at offset %d", err, unit+s.len)
			}
			return "", editSpan{}, fmt.Errorf("%w: byte %d", err, end)
		}
		if s.kept {
			b.WriteString(doc[pos:end])
		} else {
			if span.From < 0 {
				span.From = pos
			}
			b.WriteString(s.insert)
			span.OldEnd, span.NewEnd = end, b.Len()
		}
		pos, unit = end, unit+s.len
	}
	if pos != len(doc) {
		return "", editSpan{}, c.wrongLength(UTF16Len(doc))
	}
	if span.From < 0 {
		span = editSpan{From: pos, OldEnd: pos, NewEnd: b.Len()} // nothing changed
	}
	return b.String(), span, nil
}

func (c ChangeSet) wrongLength(docLen int) error {
	return fmt.Errorf("%w: the change set is for %d UTF-16 code units, the document has %d",
		ErrWrongDocLength, c.lenBase, docLen)
}

// errPastEnd is advance's report that it ran out of document; Apply reports
// ErrWrongDocLength instead.
var errPastEnd = errors.New("past the end of the document")

// advance returns the byte offset n UTF-16 code units after byte offset i of
// s. On error the offset is where it stopped.
func advance(s string, i, n int) (int, error) {
	for n > 0 {
		// ASCII, nearly all of a plan, is one unit a byte: skip runs of it
		// eight bytes at a time.
		j, end := i, min(len(s), i+n)
		for j+8 <= end && load64(s[j:j+8])&0x8080808080808080 == 0 {
			j += 8
		}
		for j < end && s[j] < utf8.RuneSelf {
			j++
		}
		n -= j - i
		i = j
		if n == 0 {
			break
		}
		if i == len(s) {
			return i, errPastEnd
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return i, ErrInvalidUTF8
		case size == 4: // outside the BMP: a surrogate pair in UTF-16
			if n == 1 {
				return i, ErrSplitSurrogate
			}
			n -= 2
		default:
			n--
		}
		i += size
	}
	return i, nil
}

// UTF16Len is the length of s in UTF-16 code units, the unit of CodeMirror's
// positions. Invalid UTF-8 counts one unit per bad byte, as encoding/json
// sends each as U+FFFD.
func UTF16Len(s string) int {
	n, i := 0, 0
	for i < len(s) {
		// ASCII, nearly all of a plan, is one unit a byte: eight at a time.
		j := i
		for j+8 <= len(s) && load64(s[j:j+8])&0x8080808080808080 == 0 {
			j += 8
		}
		for j < len(s) && s[j] < utf8.RuneSelf {
			j++
		}
		n += j - i
		if i = j; i == len(s) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// NormalizeLineEndings returns s as CodeMirror's Text holds it: "\r\n" and a
// lone "\r" become "\n" (Text.of(s.split(/\r\n?|\n/)).toString()). Apply it to
// every text that enters the server other than through a ChangeSet.
func NormalizeLineEndings(s string) string {
	if !strings.Contains(s, "\r") {
		return s // the usual case, without allocating
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// commonPrefix is the byte length of the longest run of whole characters a and b
// start with.
func commonPrefix(a, b string) int {
	// A chunk at a time first: the text's own equality runs as one
	// vectorised comparison, and a keystroke in a large plan compares the
	// whole text on either side of it.
	const chunk = 64
	n := 0
	for n+chunk <= len(a) && n+chunk <= len(b) && a[n:n+chunk] == b[n:n+chunk] {
		n += chunk
	}
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	// Back off to a character boundary: é and è share their first byte.
	for n > 0 && (n < len(a) && !utf8.RuneStart(a[n]) || n < len(b) && !utf8.RuneStart(b[n])) {
		n--
	}
	return n
}

// commonSuffix is the byte length of the longest run of whole characters a and b
// end with.
func commonSuffix(a, b string) int {
	const chunk = 64
	n := 0
	for n+chunk <= len(a) && n+chunk <= len(b) && a[len(a)-n-chunk:len(a)-n] == b[len(b)-n-chunk:len(b)-n] {
		n += chunk
	}
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	// The suffixes are the same bytes, so a suffix starts a character in a
	// exactly when it does in b.
	for n > 0 && !utf8.RuneStart(a[len(a)-n]) {
		n--
	}
	return n
}

// load64 reads eight bytes of s; the compiler makes it a single load.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
