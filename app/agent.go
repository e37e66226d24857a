package app

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/ident"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// The agent connection, GET /api/v1/agent (spec/agent-connection.md), wired
// together: agentconn serves the wire and the link lifecycle, plannerhost is
// its Host and the rooms' Planner, and the app gives both the configuration
// and the catalog and store they read through their own interfaces.

func (a *App) newPlannerHost() *plannerhost.Host {
	return plannerhost.New(plannerhost.Options{
		Logger:              a.log,
		Login:               a.cfg.Login,
		Model:               a.cfg.Model,
		MaxStoredImageBytes: a.cfg.MaxStoredImageBytes,
		CheckToken:          a.agentToken.matches,
		Catalog:             plannerCatalog{a},
		Storage:             plannerStore{a.store},
		History:             plannerHistory{a},
		PlannerAttached:     func(id string) { a.describer.runner.PlannerAttached(id) },
	})
}

func (a *App) newAgentServer() *agentconn.Server {
	return agentconn.New(agentconn.Options{
		Host:     a.planner,
		Logger:   a.log,
		Disabled: !a.cfg.Agent,
		Origin:   a.origin,
		Ping:     a.cfg.AgentPing,
		Timeout:  a.cfg.AgentTimeout,
		// Grace zero is "no grace period" in agentconn, as in the config:
		// pass the configured value as it is.
		MaxSilence: a.cfg.AgentMaxSilence,
		Grace:      a.cfg.PlannerAttachGrace,
		// What resumable links keep survives a restart.
		Holds:          holdStore{a.store},
		HandoverWindow: a.cfg.HandoverPlannerWindow,
		AnswerTimeout:  a.cfg.AgentAnswerTimeout,
	})
}

// plannerCatalog finds documents for plannerhost, as their rooms know them.
type plannerCatalog struct{ a *App }

var _ plannerhost.Catalog = plannerCatalog{}

func (c plannerCatalog) Document(ctx context.Context, id string) (room.Channel, error) {
	ch, err := c.a.store.Channel(ctx, id)
	if err != nil {
		return room.Channel{}, plannerError(err)
	}
	return c.a.roomChannel(ch), nil
}

func (c plannerCatalog) DocumentByRef(ctx context.Context, ref string) (room.Channel, error) {
	ch, err := c.a.documentByRef(ctx, ref)
	if err != nil {
		return room.Channel{}, plannerError(err)
	}
	return c.a.roomChannel(ch), nil
}

var errNoSuchDocument = &store.Error{Kind: store.ErrNotFound, Code: "channel-not-found", Message: "no document matches"}

// documentByRef resolves a document ID, or the document's Chopin URL,
// absolute (on this origin) or a path, by its current slug or any former
// one.
func (a *App) documentByRef(ctx context.Context, ref string) (store.Channel, error) {
	if ident.ValidDocumentID(ref) {
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

// plannerError is a store error as plannerhost reads it: a store not-found
// is also plannerhost.ErrNotFound, and keeps its code and message for the
// error handler.
func plannerError(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFoundForPlanner{err}
	}
	return err
}

type notFoundForPlanner struct{ err error }

func (e notFoundForPlanner) Error() string   { return e.err.Error() }
func (e notFoundForPlanner) Unwrap() []error { return []error{plannerhost.ErrNotFound, e.err} }
