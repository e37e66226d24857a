// Package room is a live document: plan text and sync, chat, decisions,
// presence, and the host tools the Planner calls; it knows nothing of HTTP or
// SQL drivers.
//
// The document model (Blocks, Decisions, CheckReserved), the read_plan and
// edit_plan host tools and the question shapes are pure functions of text:
// no I/O, no clocks, no goroutines. The room's live parts call them while
// holding the document's lock; the caller decides revisions and persistence.
package room
