// Package agentconn is the server side of the chopin.agent.v1 agent connection:
// the WebSocket through which an agent client outside the process acts as a
// document's Planner (spec/agent-connection.md).
//
// It owns everything about the wire and a link's lifecycle: the HTTP checks
// before the upgrade, strict frame decoding, pings and liveness, the attach
// handshake, Planner ownership and its grace period, sessions and turns, host
// tool calls, questions and run reports, and every close.
//
// It knows nothing of documents, rooms or storage beyond the interfaces it
// declares in host.go: the application implements Directory and Room and
// passes a TurnSink with each turn. It must not import store, room, app, echo
// or melody, and it never keeps anything for a Planner that is not attached.
package agentconn
