package wire

import (
	"reflect"
	"sync"
)

// The registry of message types: every message of chopin.agent.v1, in the
// direction it travels, listed once. A message type new to the protocol is
// added here and nowhere else for decoding to know it.
//
// The registry is built on first use rather than as a package variable:
// compiling a codec calls variantKeys through reflection, which reads tables
// (streamPartKeys, inputKeys, ...) that variable initialisation cannot see
// it depend on.

// messageTypes holds each direction's message types by wire type. resume is
// in both: the client's resume of dropped sessions (ResumeSessions) and the
// server's Resume Planner share the type, and each direction has its own.
var messageTypes = sync.OnceValue(func() (r struct{ client, server map[string]messageCodec }) {
	r.client = registry(
		entry[Attach](), entry[Started](), entry[StartFailed](), entry[Tools](), entry[Part](),
		entry[HostToolCall](), entry[TurnEnd](), entry[InputRequest](), entry[InputCancel](),
		entry[Runs](), entry[ControlResult](), entry[Detach](),
		entry[Capabilities](),                           // capability-catalog
		entry[ResumeSessions](), entry[InputReceived](), // resumable-sessions
	)
	r.server = registry(
		entry[Attached](), entry[Refused](), entry[Start](), entry[Turn](), entry[Abort](),
		entry[HostToolResult](), entry[InputResult](), entry[Stop](), entry[Resume](), entry[Destroy](),
		entry[ProtocolError](),
		entry[Steer](),                        // steer-turn
		entry[Fork](),                         // session-forks
		entry[Resumed](), entry[Restarting](), // resumable-sessions, restart-notice
	)
	return r
})

// clientMessageFeatures names the feature of each client message that
// belongs to one. A client may send it only when attached.features granted
// that feature; otherwise it is a protocol violation, whatever its shape
// (spec "Capability catalog": "Sending capabilities without having offered
// the feature is a protocol violation, and a catalog whose fields have the
// wrong type, a malformed-message one"), and every feature message is
// checked in that order.
var clientMessageFeatures = map[string]string{
	"capabilities":   FeatureCapabilityCatalog,
	"resume":         FeatureResumableSessions,
	"input-received": FeatureResumableSessions,
}

// messageCodec decodes one message type.
type messageCodec struct {
	codec  *codec
	decode func(d *decoder, c *codec) (Message, error)
}

type registryEntry struct {
	typ string
	mc  messageCodec
}

func entry[M Message]() registryEntry {
	var zero M
	return registryEntry{zero.MessageType(), messageCodec{codecFor(reflect.TypeFor[M]()), decodeMessage[M]}}
}

func registry(es ...registryEntry) map[string]messageCodec {
	r := make(map[string]messageCodec, len(es))
	for _, e := range es {
		if _, dup := r[e.typ]; dup {
			panic("wire: two messages of type " + e.typ + " travel the same way")
		}
		r[e.typ] = e.mc
	}
	return r
}
