// Package store keeps everything Chopin knows in one SQLite database
// (DESIGN.md section 5): repositories and the document catalog (slugs and
// their aliases, archive, delete), each document's plan (checkpoints and the
// journal of accepted changes), Chat and Decisions, images, browser
// sessions, the Planner's model choices and run cards, and what resumable
// agent links keep across a restart (holds).
//
// Every exported method is one use case and owns exactly one transaction;
// unexported helpers take the *sql.Tx so they compose. Writes go through a
// single connection with immediate transactions; reads use a small pool.
// Migrations are the numbered .sql files in migrations/, applied in order;
// a database from a newer Chopin is refused. A caller's mistake comes back
// as an *Error with a fault kind (ErrNotFound, ErrConflict, ErrInvalid).
//
// store knows nothing of HTTP, WebSockets, rooms or the agent connection,
// and imports nothing of Chopin's but fault.
package store
