// Package room is a live document (DESIGN.md section 6): its plan text and
// the sync that keeps every tab on the same text (CodeMirror's collab model,
// with a Go copy of its ChangeSet), Chat and the Planner's streaming replies,
// Decisions, attachments and commands, presence, and the host tools a
// Planner calls (read_plan, edit_plan, ask, open_decisions,
// upload_plan_image), over the room protocol of docs/room-protocol.md.
//
// A Hub opens one Room per document on demand and closes it when its last
// reference is released. What a room needs from outside it declares here: a Persister
// (the database), a Planner (whatever turns an @chopin message into a turn),
// a CommandChecker, and a Conn per browser socket. Every refusal is an
// *Error whose code has a fault kind (errors.go).
//
// The document model (Blocks, CheckReserved), read_plan, edit_plan and the
// question shapes are pure functions of text: no I/O, no clocks, no
// goroutines; the live parts call them while holding the document's lock.
// The question call itself is the agent connection's (agentconn/wire), the
// one definition of its methods, shapes and limits.
//
// room must not import store, app, plannerhost, agentconn (only its wire),
// echo, a WebSocket library or an SQL driver, and it publishes a change
// only after its Persister has committed it.
package room
