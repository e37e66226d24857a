// Package textrule is the one rule for text that comes into Chopin from
// outside: an HTTP body, a frame of the room socket or of the agent link,
// an MCP tool's arguments, an imported file. Bytes that are not UTF-8 are
// refused, never repaired (Go's JSON decoder would quietly turn them into
// U+FFFD, keeping text nobody sent), so every door checks the raw bytes
// with Encoding before it decodes them. A plan's text and a comment's notes
// hold no control characters but tab and line feed (Text); a title holds
// none at all, nor the characters that make it read as something else, and
// is more than invisible characters (Title).
//
// Each door refuses in its own words and codes (invalid-json over HTTP,
// malformed-message on a socket, -32602 over MCP); the rule, and so what is
// taken, is the same everywhere. It imports nothing of Chopin's.
package textrule
