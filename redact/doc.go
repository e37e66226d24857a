// Package redact masks credentials in text and JSON before they are kept or
// shown: URL credentials, credential assignments (every proxy setting
// included) and token shapes, as agent-connection.md ("Structured tool
// errors") defines them. Text masks a string; JSON masks a JSON value and
// keeps it valid JSON of the same shape.
//
// It is a leaf library: it imports nothing of Chopin's, holds no state and
// does no I/O. It must not change what crosses a connection, only what is
// stored and shown, and what the bundled Planner hands its model from a
// repository's checkout; and it must stay linear in its input, since tool
// results are large and written by anyone.
package redact
