// Package version says which build of Chopin this is: its version, commit
// and date, for `chopin version`, `chopin --version` and GET /api/session.
// It imports nothing of Chopin's.
package version
