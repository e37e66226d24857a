// Command chopin-bench is the side-by-side performance harness: it builds
// the real chopin binary and starts it with temporary config and data
// directories beside its baselines (a hello-world Go server, a bare
// WebSocket relay that does one fsync'd SQLite insert per message, the bare
// SQL query of the catalog), measures every row of the harness table in
// docs/performance.md in one run, and prints that table in Markdown with the
// machine's load and cores; with -write-doc it also puts the table between
// the doc's marker lines, so the doc's harness rows are never typed by hand.
//
// It is a tool for the repository, never linked into chopin. It must not
// touch a person's own data or anything but loopback: every process it
// starts gets fresh temporary directories, removed at the end, and a free
// port on 127.0.0.1.
package main
