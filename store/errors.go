package store

// The store's refusals: a caller's mistake comes back as a fault.Error whose
// kind says what sort it is.

import "github.com/chopin-desktop/chopin/fault"

// The kinds of failure a caller can act on. Every error the store returns for
// a caller's mistake is an *Error of one of these kinds, with a stable code
// and a message fit for the person; errors.Is(err, ErrNotFound) matches it.
const (
	ErrNotFound = fault.NotFound
	ErrConflict = fault.Conflict
	ErrInvalid  = fault.Invalid
)

// Error is a failure the caller caused, with a stable machine-readable Code
// (for example "title-taken") and a plain-English Message.
type Error = fault.Error

func notFound(code, format string, args ...any) error {
	return fault.Errorf(ErrNotFound, code, format, args...)
}

func conflict(code, format string, args ...any) error {
	return fault.Errorf(ErrConflict, code, format, args...)
}

func invalid(code, format string, args ...any) error {
	return fault.Errorf(ErrInvalid, code, format, args...)
}
