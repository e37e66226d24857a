package textrule

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Problem is the first thing in a text that breaks the rule.
type Problem struct {
	Offset int  // the byte offset of the offending character or byte
	Rune   rune // the character, or utf8.RuneError for bytes that are not UTF-8
	What   string
}

// Error says what is wrong, without where: the caller knows how to name
// the place (a byte, a line and column, a field).
func (p *Problem) Error() string { return p.What }

// Encoding checks that b is UTF-8. The check is linear and allocates
// nothing, so a door runs it over a whole body or frame before decoding.
func Encoding(b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return &Problem{Offset: i, Rune: utf8.RuneError, What: fmt.Sprintf("is not valid UTF-8 (byte %d is 0x%02X)", i, b[i])}
		}
		i += size
	}
	return nil // not reached: utf8.Valid said there is a bad byte
}

// JSON checks JSON text from outside before it is decoded: UTF-8, and no
// \u escape of half a surrogate pair without its other half, which no
// UTF-8 text can hold and which a decoder turns into U+FFFD as it would a
// bad byte. The scan is linear: a backslash outside a string is not JSON
// at all, which the decoder refuses next.
func JSON(b []byte) error {
	if err := Encoding(b); err != nil {
		return err
	}
	for i := 0; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '\\') // vectorised: most text has few escapes
		if j < 0 {
			break
		}
		i += j
		if i+1 < len(b) && b[i+1] == 'u' {
			if r := hex4(b[i:]); utf16.IsSurrogate(r) {
				if r < 0xdc00 && utf16.DecodeRune(r, hex4(b[i+6:])) != utf8.RuneError {
					i += 6 // the pair's second half is read next, and skipped
				} else {
					return &Problem{Offset: i, Rune: r, What: fmt.Sprintf("holds \\u%04X, half of a UTF-16 surrogate pair without its other half", r)}
				}
			}
		}
		i++ // the escaped character: a backslash there escapes nothing after it
	}
	return nil
}

// hex4 is the code unit of the \uXXXX escape b starts with, or -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

// Text checks the text of a plan or of a comment's note: UTF-8 with no
// control character but tab and line feed. A carriage return is refused
// too: the doors that take whole files and plans (an import, a PUT, MCP's
// update_document) turn "\r\n" and "\r" into "\n" before they check, as
// the editor holds its lines, so a CR only arrives where it has no place.
func Text(s string) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return &Problem{Offset: i, Rune: r, What: fmt.Sprintf("is not valid UTF-8 (byte %d is 0x%02X)", i, s[i])}
			}
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7f:
			return &Problem{Offset: i, Rune: r, What: "holds the control character " + Name(r)}
		}
	}
	return nil
}

// Title checks a title (already trimmed): UTF-8 on one line, with no
// control character, no bidirectional override, isolate or mark (which
// make a title read as something else), and at least one character that
// shows.
func Title(s string) error {
	visible := false
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return &Problem{Offset: i, Rune: r, What: fmt.Sprintf("is not valid UTF-8 (byte %d is 0x%02X)", i, s[i])}
			}
		case unfitForTitle(r):
			return &Problem{Offset: i, Rune: r, What: "holds " + Name(r) + ", a control or text-direction character"}
		}
		visible = visible || !Invisible(r)
	}
	if !visible && s != "" {
		return &Problem{Rune: -1, What: "has no visible character (only spaces, zero-width or formatting characters)"}
	}
	return nil
}

// unfitForTitle is a character a title may not hold: NUL and the other
// control characters (line breaks included), and the bidirectional
// overrides, isolates and marks.
func unfitForTitle(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// Invisible reports whether r shows nothing on its own: white space, a
// format character (zero-width spaces and joiners, the byte order mark,
// the soft hyphen, tags), a variation selector, one of the other
// characters Unicode says to ignore when they cannot be shown (the Hangul
// fillers, the combining grapheme joiner), or the blank Braille pattern.
func Invisible(r rune) bool {
	return unicode.IsSpace(r) || r == 0x2800 ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// Name is r as a person reads it in a refusal: "U+0000 (NUL)".
func Name(r rune) string {
	if int(r) < len(c0Names) {
		return fmt.Sprintf("U+%04X (%s)", r, c0Names[r])
	}
	if r == 0x7f {
		return "U+007F (DEL)"
	}
	return fmt.Sprintf("U+%04X", r)
}

var c0Names = [...]string{"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "TAB", "LF", "VT", "FF", "CR",
	"SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US"}
