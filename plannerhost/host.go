package plannerhost

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/store"
)

// The agent connection, GET /api/v1/agent (spec/agent-connection.md): agentconn
// serves the wire and the link lifecycle; the app is its Host. agentHost
// answers who and what (this file), runs the host tools against the
// document's room (agent_tools.go), turns questions into Decisions
// (agent_questions.go) and shows run cards (agent_runs.go). The Planner side
// of Chat, turns and their replies, is planner*.go.

// agentHost is the app as agentconn's Host. It is a type of its own so that
// agentconn's method names (Document, Ask, ...) do not crowd App's.
type agentHost struct{ a *App }

var _ agentconn.Host = agentHost{}

func (a *App) newAgentServer() *agentconn.Server {
	return agentconn.New(agentconn.Options{
		Host:     agentHost{a},
		Logger:   a.log,
		Disabled: !a.cfg.Agent,
		Origin:   a.origin,
		Ping:     a.cfg.AgentPing,
		Timeout:  a.cfg.AgentTimeout,
		// Grace zero is "no grace period" in agentconn, as in the config:
		// pass the configured value as it is.
		MaxSilence: a.cfg.AgentMaxSilence,
		Grace:      a.cfg.PlannerAttachGrace,
		// What resumable links keep survives a restart (agent_holds.go).
		Holds:          holdStore{a.store},
		HandoverWindow: a.cfg.HandoverPlannerWindow,
		AnswerTimeout:  a.cfg.AgentAnswerTimeout,
	})
}

// Authenticate knows one bearer: the local agent token, read again from its
// file on rotation. It is the local account.
func (h agentHost) Authenticate(_ context.Context, bearer string) (agentconn.Account, error) {
	if !h.a.agentToken.matches(bearer) {
		return agentconn.Account{}, agentconn.ErrUnauthorized
	}
	return agentconn.Account{Login: h.a.cfg.Login}, nil
}

// Document resolves attach's document: an ID, or the document's Chopin URL,
// absolute (on this origin) or a path, by its current slug or any former one.
func (h agentHost) Document(ctx context.Context, ref string) (agentconn.Document, error) {
	ch, err := h.a.documentByRef(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return agentconn.Document{}, agentconn.ErrDocumentNotFound
	}
	if err != nil {
		return agentconn.Document{}, err
	}
	return agentconn.Document{ID: ch.ID, Title: ch.Title, Repository: ch.Repository,
		URL: h.a.origin + documentPath(ch), Archived: ch.Archived()}, nil
}

var errNoSuchDocument = &store.Error{Kind: store.ErrNotFound, Code: "channel-not-found", Message: "no document matches"}

func (a *App) documentByRef(ctx context.Context, ref string) (store.Channel, error) {
	if store.ValidChannelID(ref) {
		return a.store.Channel(ctx, ref)
	}
	u, err := url.Parse(ref)
	if err != nil {
		return store.Channel{}, errNoSuchDocument
	}
	if u.Scheme != "" || u.Host != "" {
		own, _ := url.Parse(a.origin)
		if !strings.EqualFold(u.Scheme, own.Scheme) || !strings.EqualFold(u.Host, own.Host) {
			return store.Channel{}, errNoSuchDocument
		}
	}
	// /documents/:owner/:repository/:slug, or a child document's
	// /documents/:owner/:repository/:parent/children/:slug: slugs are unique
	// within a repository, so the last one names it.
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 4 && (len(parts) != 6 || parts[4] != "children") || parts[0] != "documents" {
		return store.Channel{}, errNoSuchDocument
	}
	repo, err := a.store.RepositoryByName(ctx, parts[1], parts[2])
	if err != nil {
		return store.Channel{}, err
	}
	return a.store.ChannelBySlug(ctx, repo.NodeID, parts[len(parts)-1])
}

// Access is the one role check: may this account hold the document's
// Planner (push or administration access)? The local account administers
// every repository; any other login has no access. An archived document is
// refused by agentconn itself, with the spec's document-archived.
func (h agentHost) Access(_ context.Context, account agentconn.Account, _ agentconn.Document) error {
	if account.Login != h.a.cfg.Login {
		return agentconn.ErrForbidden
	}
	return nil
}

// PlannerChanged shows the document's open tabs the Planner's new state.
func (h agentHost) PlannerChanged(documentID string, status agentconn.PlannerStatus) {
	if r, ok := h.a.hub.Room(documentID); ok {
		r.ShowPlanner(h.a.plannerJSON(documentID, status))
		r.ShowModel(h.a.modelState(documentID)) // a catalog ends with its link
	}
	if status.State == agentconn.PlannerAttached {
		go h.a.flushAnswers(documentID) // agent_answers.go
	}
}
