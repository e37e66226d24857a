package agentconn

import (
	"reflect"
	"testing"
)

// FuzzDecodeFrame feeds the frame decoders arbitrary bytes: nothing may
// panic or hang, and whatever decodes must encode and decode to itself.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
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
	} {
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
