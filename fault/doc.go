// Package fault is Chopin's one vocabulary of domain errors: a Kind says what
// sort of failure an error is (invalid, not found, conflict, ...), and an
// Error pairs a kind with a stable code and a message fit for a person.
//
// Packages that refuse a caller (store, room) put a kind on every refusal;
// the HTTP layer turns kinds into statuses in one place, so no code needs a
// status of its own. fault is a leaf: it imports nothing of Chopin's and
// knows nothing of HTTP, WebSockets or storage.
package fault
