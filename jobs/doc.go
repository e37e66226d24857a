// Package jobs is Chopin's durable background work (DESIGN.md section 11):
// a small runner of typed jobs (type@version) kept in SQLite through the
// Store it declares, and the one job type the catalog needs today,
// document-summary@1, which writes a document's one-line description
// through isolated Planner turns (spec/channels.md "Generated
// descriptions").
//
// A job has a target document and an idempotency key unique per document:
// the same key returns the original job, a new one supersedes the
// document's older open jobs, whose late output is never committed. At
// most two jobs run at once, one per document. A job that needs a Planner
// pauses as planner-unavailable while none is attached and resumes when one
// attaches, so nothing runs for a document nobody is working on.
//
// It must not import store, room, agentconn or app: storage, documents and
// the Planner are the small interfaces declared here, which app implements
// (the store through StoreOf, which converts its job types to this
// package's).
// It never stores a document's text or a model's prompt in a job.
package jobs
