// Package agentconn is the server side of the chopin.agent.v1 agent connection:
// the WebSocket through which an agent client outside the process acts as a
// document's Planner (spec/agent-connection.md).
//
// It owns a link's lifecycle: the HTTP checks before the upgrade, reading
// and writing frames, pings and liveness, the attach handshake, Planner
// ownership and its grace period, sessions and turns, host tool calls,
// questions and run reports, holds of a dropped resumable link, and every
// close. The protocol itself (the messages, their strict decoding, the
// spec's limits and words, the feature names) is the wire package's, which
// the server and the Go client share.
//
// Besides a person's turns (StartTurn), it runs background jobs' turns in
// isolated sessions (StartIsolated): no tools, no Decisions, beside the
// Planner's turn without making either busy.
//
// It knows nothing of documents, rooms or storage beyond the interfaces it
// declares. The application passes a Host to New, and may give it more:
//
//   - Host is Directory (who a bearer is, what a document is, who may hold
//     its Planner) and Room (Chat, Decisions, run cards and host tools).
//   - TurnSink receives one turn's stream; each TurnRequest carries one.
//   - HoldStore (Options.Holds) keeps a dropped resumable link's hold
//     across a restart; without it holds live in memory only.
//   - CatalogHost, when the Host implements it, is told each capability
//     catalog a client reports (capability-catalog).
//   - Reopener, when the Host implements it, waits again on a held
//     question's Decisions after a restart; without it such a question is
//     left out of the restored hold.
//   - Undelivered, when the Host implements it, is given each answer a
//     client will never receive, so the Planner can still read it.
//
// It must not import store, room, app or echo, and it never keeps
// anything for a Planner that is not attached, beyond a resumable link's
// hold.
package agentconn
