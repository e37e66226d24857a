package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeFrame feeds the frame decoders arbitrary bytes: nothing may
// panic or hang, and whatever decodes must encode and decode to itself.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, decode := range []func([]byte) (Message, error){DecodeClientFrame, DecodeServerFrame} {
			m, err := decode(data)
			if err != nil {
				continue
			}
			wire, err := Encode(m)
			if err != nil {
				t.Fatalf("decoded %T does not encode: %v", m, err)
			}
			back, err := decode(wire)
			if err != nil {
				t.Fatalf("re-encoded %s does not decode: %v", wire, err)
			}
			if !reflect.DeepEqual(back, m) {
				t.Fatalf("round trip changed the message:\n%#v\n%#v", m, back)
			}
		}
	})
}

var fuzzSeeds = []string{
	`{"type":"attach","version":1,"document":"d1","checkout":{"branch":"main"}}`,
	`{"type":"part","session":"s","turn":"t","part":{"type":"text-delta","id":"a","delta":"hi"}}`,
	`{"type":"part","session":"s","turn":"t","part":{"type":"tool-result","toolCallId":"c","toolName":"n","result":{"a":[1,2,{"b":null}]},"isError":true}}`,
	`{"type":"part","session":"s","turn":"t","part":{"type":"finish","finishReason":{"unified":"stop"},"totalUsage":{"inputTokens":{"total":1}}}}`,
	`{"type":"input-request","request":"r","session":"s","input":{"method":"questionnaire","params":{"questions":[{"question":"q","header":"h","options":[{"label":"l","description":"d"}]}]}}}`,
	`{"type":"runs","session":"s","active":["r"],"paused":[],"cards":[{"id":"r","name":"n","status":"running","started":0,"updated":0,"stages":[{"id":"a","name":"a","status":"running"}],"waiting":0}]}`,
	`{"type":"control-result","request":"c","ok":true}`,
	`{"type":"turn","session":"s","turn":"t","prompt":"p","tools":[{"name":"read_plan","inputSchema":{}}]}`,
	`{"type":"input-result","request":"r","status":"answered","value":{"answers":[],"cancelled":false}}`,
	`{"type":"detach","type":"detach"}`,
	`{"type":"started","session":"\u00e9\ud800"}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	``,
	`{"type":"host-tool-result","session":"s","turn":"t","toolCallId":"c","output":{ "a" : [1, "x y"] }}`,
	`{"type":"part","session":"s","turn":"t","part":{"type":"text-delta","id":"a","delta":"line\nnext \"q\" \u00e9\ud83d\ude00\udc00"}}`,
	`{"type":"runs","session":"s","active":[],"paused":[],"cards":[{"id":"r","name":"n","status":"running","started":0,"updated":0,"stagesDelta":false,"stages":[],"waiting":0}]}`,
	`{"type":"resume","type":"resume"}`,
}

// FuzzDecoderAgainstReference holds the one-pass decoder to the two-pass one
// it replaced (reference_test.go): both accept the same frames, as the same
// messages, and refuse the others for the same kind of reason, so a client
// sees the same close. The one deliberate difference: "stagesDelta": false,
// which the reference let through and the spec does not allow.
func FuzzDecoderAgainstReference(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		none := func(string) bool { return false }
		for _, pair := range []struct {
			decode    func([]byte) (Message, error)
			reference map[string]reflect.Type
			granted   func(string) bool
		}{
			{DecodeClientFrame, refClientMessages, nil},
			{func(b []byte) (Message, error) { return DecodeGrantedClientFrame(b, none) }, refClientMessages, none},
			{DecodeServerFrame, refServerMessages, nil},
		} {
			m, err := pair.decode(data)
			want, wantErr := refDecodeFrame(data, pair.reference, pair.granted)
			if err == nil && !json.Valid(data) {
				t.Fatalf("accepted %q, which is not JSON", data)
			}
			if err != nil && strings.Contains(err.Error(), "stagesDelta is always true") && wantErr == nil {
				continue
			}
			if errorKind(err) != errorKind(wantErr) {
				t.Fatalf("%q:\n got err %v\nwant err %v", data, err, wantErr)
			}
			if err != nil {
				continue
			}
			got, _ := Encode(m)
			ref, _ := Encode(want)
			if !bytes.Equal(got, ref) {
				t.Fatalf("%q decodes to\n%s\nnot\n%s", data, got, ref)
			}
		}
	})
}

// errorKind is what a refusal becomes on the wire: no error, malformed,
// an unoffered feature (protocol) or too large.
func errorKind(err error) string {
	var m *MalformedError
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, errFrameTooLarge):
		return "too large"
	case isUnoffered(err):
		return "unoffered"
	case errors.As(err, &m):
		return "malformed"
	}
	return "other: " + err.Error()
}
