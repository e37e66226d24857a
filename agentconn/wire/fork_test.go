package wire

import (
	"errors"
	"strings"
	"testing"
)

// The exact wire form of fork (session-forks), and its strict decoding.
func TestWireGoldenFork(t *testing.T) {
	tests := []struct {
		msg  Message
		wire string
	}{
		{Fork{Session: "s2", Mode: "planner", From: ForkFrom{Session: "s1", Turn: "t1"}},
			`{"type":"fork","session":"s2","mode":"planner","from":{"session":"s1","turn":"t1"}}`},
		{Fork{Session: "s2", Mode: "planner", From: ForkFrom{Session: "s1"}},
			`{"type":"fork","session":"s2","mode":"planner","from":{"session":"s1"}}`},
	}
	checkGolden(t, tests)
	for _, tt := range []struct{ frame, reason string }{
		{`{"type":"fork","session":"s2","mode":"planner"}`, "from is missing"},
		{`{"type":"fork","session":"s2","mode":"planner","from":{"turn":"t1"}}`, "from.session is missing"},
		{`{"type":"fork","session":"s2","mode":"planner","from":{"session":"s1","x":1}}`, "from.x is not a field"},
		{`{"type":"fork","session":"s2","mode":"planner","from":{"session":""}}`, "from.session is empty"},
		{`{"type":"fork","session":"s2","mode":"solo","from":{"session":"s1"}}`, "mode"},
	} {
		_, err := DecodeServerFrame([]byte(tt.frame))
		var m *MalformedError
		if !errors.As(err, &m) || !strings.Contains(m.Reason, tt.reason) {
			t.Errorf("%s: err = %v, want a MalformedError mentioning %q", tt.frame, err, tt.reason)
		}
	}
	if _, err := DecodeClientFrame([]byte(`{"type":"fork","session":"s2","mode":"planner","from":{"session":"s1"}}`)); err == nil {
		t.Error("a client may not send fork")
	}
}
