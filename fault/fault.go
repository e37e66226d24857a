package fault

// The kinds of failure and the error that carries one. The set is exactly
// the kinds Chopin's refusals need; a new kind also needs a status in the
// app's error handler.

import (
	"fmt"
	"strings"
	"unicode"
)

// A Kind is what sort of failure an error is: what a caller can do about
// it, whatever the particular code. It is an error itself, so
// errors.Is(err, fault.NotFound) finds the kind of any Error in a chain.
type Kind string

// The kinds. Their text is what Error returns.
const (
	// Invalid is a request that cannot be done as asked: malformed,
	// out of range, or breaking a rule of the document.
	Invalid Kind = "invalid"
	// NotFound is a request for something that does not exist.
	NotFound Kind = "not found"
	// Conflict is a request that was valid but clashes with the current
	// state: a stale version, an archived document, a busy Planner.
	Conflict Kind = "conflict"
	// TooLarge is a request over one of Chopin's size limits.
	TooLarge Kind = "too large"
	// Forbidden is a request the caller may not make.
	Forbidden Kind = "forbidden"
	// Internal is Chopin's own failure, not the caller's.
	Internal Kind = "internal"
	// StorageFull is a change not saved because the disk is full.
	StorageFull Kind = "storage full"
	// StorageUnavailable is a read or write the disk failed.
	StorageUnavailable Kind = "storage unavailable"
)

func (k Kind) Error() string { return string(k) }

// Error is a refusal with its Kind, a stable machine-readable Code (for
// example "title-taken") that clients and tests match on, and a Message in
// plain English that says what happened and what to do.
type Error struct {
	Kind    Kind
	Code    string
	Message string
}

// Errorf makes an Error whose message is formatted as fmt.Sprintf does.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the error's kind, so errors.Is matches an Error by its kind.
func (e *Error) Unwrap() error {
	if e.Kind == "" {
		return nil
	}
	return e.Kind
}

// Sentence is a message as a person reads it: its first letter upper case
// and a full stop at its end.
func Sentence(s string) string {
	r := []rune(s)
	if len(r) == 0 {
		return s
	}
	r[0] = unicode.ToUpper(r[0])
	s = string(r)
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
