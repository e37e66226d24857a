package room

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// A plan's history: who made each accepted change. The author rides on the
// Update (not on the wire) to the Persister, which keeps it with the change
// in the same transaction; the app reads the history back (app/history.go).

// Author kinds.
const (
	AuthorPerson  = "person"  // a member's edit, by login
	AuthorPlanner = "planner" // the Planner's edit_plan, with its turn and model
	AuthorMCP     = "mcp"     // an MCP client's update_document, by its clientInfo name
	AuthorImport  = "import"  // a plan file's import
	AuthorRestore = "restore" // a person restored an earlier version
	AuthorServer  = "server"  // HTTP PUT, decision lines and the rest of the server's own edits
)

// Author is who made a change.
type Author struct {
	Kind  string `json:"kind"`
	Name  string `json:"name,omitempty"`  // a person's login, an MCP client's name
	Turn  string `json:"turn,omitempty"`  // the Planner's turn
	Model string `json:"model,omitempty"` // the Planner's model, when known
}

type authorKey struct{}

// WithAuthor is ctx carrying who is making the server's edits made with it:
// ReplaceText and EditPlan attribute their change to a, where their caller
// knows more than the room (an MCP client, an import, a Planner turn).
func WithAuthor(ctx context.Context, a Author) context.Context {
	return context.WithValue(ctx, authorKey{}, a)
}

// authorOf is the author ctx carries, else fallback.
func authorOf(ctx context.Context, fallback Author) Author {
	if a, ok := ctx.Value(authorKey{}).(Author); ok && a.Kind != "" {
		return a
	}
	return fallback
}

// Version is one kept version of a plan, as the history lists it.
type Version struct {
	Version int64  `json:"version"`
	Time    int64  `json:"time"` // unix milliseconds
	Author  Author `json:"author"`
	Summary string `json:"summary"`
}

// A list of versions (list_versions, the Planner's and MCP's) comes
// VersionsPage at a time, or as many as its limit asks, up to
// MaxVersionsPage.
const (
	VersionsPage    = 50
	MaxVersionsPage = 200
)

// VersionsListed is what a list of versions holds, as both list_versions
// tools describe it.
const VersionsListed = "newest first, 50 at a time (limit: 1 to 200): every change for a recent window, then one version per day. " +
	"Each has its version number, time (unix milliseconds), author {kind: person, planner, mcp, import, restore, revert or server; " +
	"name: a person's login or an MCP client's name; turn and model for the Planner} and a one-line summary of what it changed."

// ApplyChanges applies change sets, in their JSON form, to text in turn.
func ApplyChanges(text string, changes ...json.RawMessage) (string, error) {
	for i, js := range changes {
		cs, err := ParseChangeSet(js)
		if err != nil {
			return "", fmt.Errorf("change %d: %w", i+1, err)
		}
		if text, err = cs.Apply(text); err != nil {
			return "", fmt.Errorf("change %d: %w", i+1, err)
		}
	}
	return text, nil
}

// Restore makes the plan read text, an earlier version's, as one new change
// on top, attributed to who as a restore, and says so in Chat. when is the
// restored version's time as people read it ("14:02"). Restoring the text
// the plan already has changes nothing.
func (r *Room) Restore(ctx context.Context, who Identity, version int64, when, text string) (int64, error) {
	defer r.checkpointIfDue(ctx) // after the lock is let go
	r.mu.Lock()
	if err := r.writableLocked(); err != nil {
		r.mu.Unlock()
		return r.plan.version, err
	}
	text = NormalizeLineEndings(text)
	if text == r.plan.text {
		now := r.plan.version
		r.mu.Unlock()
		return now, nil
	}
	err := CheckReserved(r.plan.text, text)
	if err == nil && !hasContent(Blocks(text)) {
		err = errorf(CodeEmptyDocument, "That version of the plan is empty, and a plan is never emptied: choose another version.")
	}
	var u Update
	if err == nil {
		u, err = r.serverUpdateLocked(text)
	}
	if err == nil {
		u.Author = Author{Kind: AuthorRestore, Name: who.Login}
		_, err = r.commitUpdateLocked(ctx, u, text, serverClientID, nil)
	}
	now := r.plan.version
	r.mu.Unlock()
	if err != nil {
		return now, err
	}
	name := who.Name
	if name == "" {
		name = who.Login
	}
	r.Notice(ctx, name+" restored the version of "+when+" (revision "+strconv.FormatInt(version, 10)+").")
	return now, nil
}
