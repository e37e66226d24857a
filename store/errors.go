package store

import (
	"errors"
	"fmt"
)

// The kinds of failure a caller can act on. Every error the store returns for
// a caller's mistake wraps one of these in an *Error that also carries a
// stable code and a message fit for the person.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid")
)

// Error is a failure the caller caused, with a stable machine-readable Code
// (for example "title-taken") and a plain-English Message.
type Error struct {
	Kind    error // ErrNotFound, ErrConflict or ErrInvalid
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Kind }

func notFound(code, format string, args ...any) error {
	return &Error{Kind: ErrNotFound, Code: code, Message: fmt.Sprintf(format, args...)}
}

func conflict(code, format string, args ...any) error {
	return &Error{Kind: ErrConflict, Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalid(code, format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Code: code, Message: fmt.Sprintf(format, args...)}
}
