package plannerhost

import (
	"encoding/json"
	"time"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// A document's Planner as the UI and HTTP show it: the room's planner:status
// and GET .../planner, with the document's run cards.

// Status is a document's Planner as the UI and HTTP show it.
//
//	{ "state": "none", "runs": [] }
//	{ "state": "attached", "login": "ada", "features": ["run-stage-deltas"], "since": "...", "runs": [RunCard...] }
//	{ "state": "grace", "login": "ada", "until": "2026-10-10T19:42:00.000Z", "runs": [...] }
//
// "disconnected" (a resumable link that dropped with its work kept) is
// reserved for when agentconn keeps such links.
type Status struct {
	State    string         `json:"state"`
	Login    string         `json:"login,omitempty"`
	Features []string       `json:"features,omitempty"`
	Since    string         `json:"since,omitempty"`
	Until    string         `json:"until,omitempty"`
	Runs     []wire.RunCard `json:"runs"`
	// Checkout is the local checkout the attached Planner reads, as its
	// capability catalog reports it; absent when it reports none.
	Checkout *Checkout `json:"checkout,omitempty"`
}

// Checkout is the local checkout a Planner reads: the "checkout" field of
// the bundled Planner's capability catalog, which the spec has Chopin keep
// as written. Another client's field of that name is read the same way, and
// ignored when it is not this shape.
type Checkout struct {
	Path   string `json:"path"`
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
	Git    bool   `json:"git"` // false: Git was not found where the Planner runs
}

// catalogCheckout reads the checkout a catalog reports, nil for none.
func catalogCheckout(cat *wire.Catalog) *Checkout {
	if cat == nil || len(cat.Raw) == 0 {
		return nil
	}
	var raw struct {
		Checkout json.RawMessage `json:"checkout"`
	}
	if json.Unmarshal(cat.Raw, &raw) != nil || len(raw.Checkout) == 0 {
		return nil
	}
	var c struct {
		Path   string `json:"path"`
		Branch string `json:"branch"`
		Head   string `json:"head"`
		Git    *bool  `json:"git"`
	}
	if json.Unmarshal(raw.Checkout, &c) != nil || c.Path == "" {
		return nil
	}
	return &Checkout{Path: c.Path, Branch: c.Branch, Head: c.Head, Git: c.Git == nil || *c.Git}
}

// Status is the document's Planner now.
func (h *Host) Status(documentID string) Status {
	return h.status(documentID, h.agent.Status(documentID))
}

func (h *Host) status(documentID string, st agentconn.PlannerStatus) Status {
	out := Status{State: string(st.State), Login: st.Login, Features: st.Features, Runs: h.runCards(documentID)}
	if !st.Since.IsZero() {
		out.Since = rfc3339(st.Since)
	}
	if !st.Until.IsZero() {
		out.Until = rfc3339(st.Until)
	}
	if st.State == agentconn.PlannerAttached {
		out.Checkout = catalogCheckout(h.agent.Catalog(documentID))
	}
	return out
}

// rfc3339 is a time as the HTTP API writes every time: UTC, milliseconds.
func rfc3339(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
