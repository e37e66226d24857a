// Package plannerhost is the server's side of a Planner's turn: the bridge
// between a document's room and the agent link attached as its Planner
// (spec/agent-connection.md; DESIGN.md sections 7 and 8).
//
// A Host implements agentconn.Host, through which the link attaches, runs
// the host tools against the document, asks its people questions as
// Decisions and reports run cards, and room.Planner, through which a
// person's @chopin message becomes a turn whose stream becomes the
// Planner's reply in Chat. It owns what lives between the two: run cards,
// the outlines the Planner was shown, open questions, answers nobody waits
// on, and the replies still streaming.
//
// It knows no HTTP and no SQL. app builds a Host with what it needs (the
// catalog and the storage as the small interfaces of storage.go), plugs in
// the room hub and the agent connection server, and serves the routes that
// call Host's exported methods. It must not import app, store, echo
// or database/sql.
package plannerhost
