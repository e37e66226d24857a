// Package wire is the chopin.agent.v1 protocol itself (spec/agent-connection.md),
// apart from either end of it: the Go struct of every message and the
// encoder that writes its exact wire form; strict, one-pass decoding of a
// frame into its message, with every limit of the spec checked; the limits
// and the spec's default durations; the words both ends exchange (refusal,
// error and close codes, and every sentence a client reads); the registry
// of optional features (features.go says what adding one touches) and of
// message types; and the question call (methods, shapes, limits, the JSON
// Schema of a questionnaire's questions), which the room's Decisions share.
//
// The server (agentconn) and the Go client (agentconn/client) both import
// it, so neither needs the other. It must import nothing of this module and
// nothing that opens a connection: it is values, bytes and rules.
package wire
