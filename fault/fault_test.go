package fault

// Kinds match through wrapping, whoever made the error.

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorMatchesItsKind(t *testing.T) {
	err := fmt.Errorf("rename: %w", Errorf(Conflict, "title-taken", "another document is titled %q", "Plan"))
	if !errors.Is(err, Conflict) || errors.Is(err, NotFound) {
		t.Errorf("errors.Is by kind: got conflict %v, not found %v", errors.Is(err, Conflict), errors.Is(err, NotFound))
	}
	var fe *Error
	if !errors.As(err, &fe) || fe.Code != "title-taken" || fe.Message != `another document is titled "Plan"` {
		t.Errorf("errors.As = %+v", fe)
	}
	var k Kind
	if !errors.As(err, &k) || k != Conflict {
		t.Errorf("errors.As a Kind = %q", k)
	}
	if (&Error{Code: "x"}).Unwrap() != nil {
		t.Error("an Error without a kind unwraps to a kind")
	}
}
