package mcpserver

// The checks the SDK's transport leaves to this package: which bodies are
// JSON-RPC errors before the SDK sees them, and which methods are unknown.
// The tools themselves are tested end to end in app (mcp_test.go).

import "testing"

func TestCheckMessage(t *testing.T) {
	for body, want := range map[string]int64{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:         0,
		`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`:       0,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`: 0,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                   0,
		`{"jsonrpc":"2.0","id":-1,"method":"ping"}`:              0,
		`{`: -32700,
		``:  -32700,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`: -32600,
		`"ping"`:                   -32600,
		`{"id":1,"method":"ping"}`: -32600,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`:    -32600,
		`{"jsonrpc":"2.0","id":1}`:                    -32600,
		`{"jsonrpc":"2.0","id":1,"method":7}`:         -32600,
		`{"jsonrpc":"2.0","id":1,"method":""}`:        -32600,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`: -32600,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`:  -32600,
		// Ids the SDK would read as another id, or not at all.
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`:            -32600,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`:              -32600,
		`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`: -32600,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`:             -32600,
		`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`: 0,
		`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`:              0,
		// A response answers an id.
		`{"jsonrpc":"2.0","result":{}}`:                                -32600,
		`{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}`:           -32600,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`: -32600,
	} {
		if got, _ := checkMessage([]byte(body)); got != want {
			t.Errorf("%s: %d, want %d", body, got, want)
		}
	}
}

func TestUnknownMethod(t *testing.T) {
	if _, _, unknown := unknownMethod([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)); unknown {
		t.Error("tools/call is unknown")
	}
	if m, id, unknown := unknownMethod([]byte(`{"jsonrpc":"2.0","id":7,"method":"x/y"}`)); !unknown || m != "x/y" || string(id) != "7" {
		t.Errorf("x/y: %q %s %v", m, id, unknown)
	}
	if _, id, unknown := unknownMethod([]byte(`{"jsonrpc":"2.0","method":"notifications/x"}`)); !unknown || id != nil {
		t.Errorf("an unknown notification: %s %v", id, unknown)
	}
}

func TestIsUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"2b0c5d1e-0000-5000-8000-000000000000":  true,
		"2B0C5D1E-0000-5000-8000-000000000000":  false, // locate lowers it first
		"2b0c5d1e00005000800000000000000000000": false,
		"2b0c5d1e-0000-5000-8000-00000000000g":  false,
		"":                                      false,
	} {
		if isUUID(s) != want {
			t.Errorf("isUUID(%q) = %v", s, !want)
		}
	}
}

func TestLeadingID(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"abc`: "7",
		`{"id":"a b","jsonrpc":"2.0"}`:                                     `"a b"`,
		`{"jsonrpc":"2.0","params":{"x":"abc`:                              "",
		`{"jsonrpc":"2.0","id":1.5}`:                                       "",
		`{"jsonrpc":"2.0","id":{}}`:                                        "",
		`[1]`:                                                              "",
		``:                                                                 "",
	} {
		if got := string(leadingID([]byte(body))); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}
