package app

// The repositories routes: list, register, rename, remove, set a
// repository's local checkout, and read one with what its checkout holds
// (docs/http-api.md).

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/checkout"
	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/redact"
	"github.com/chopin-desktop/chopin/store"
)

type repositoryJSON struct {
	NodeID string `json:"nodeId"`
	Name   string `json:"name"` // owner/name
	Owner  string `json:"owner"`
	Repo   string `json:"repository"`
	Path   string `json:"path,omitempty"`
	// Config: chopin.toml's [[repository]] tables name this repository (by
	// its name or a former one), so Chopin registers it at every start.
	Config bool `json:"config,omitempty"`
	// Checkout is what the checkout at Path holds now; absent without one.
	Checkout *checkoutJSON `json:"checkout,omitempty"`
}

// checkoutJSON is a checkout as the repositories page shows it.
type checkoutJSON struct {
	Git    bool   `json:"git"`              // git was found on this computer
	Branch string `json:"branch,omitempty"` // empty on a detached HEAD
	Head   string `json:"head,omitempty"`   // the current commit
	Origin string `json:"origin,omitempty"` // the origin remote, credentials masked
	// Warning is said, never refused: the origin remote names another
	// repository.
	Warning string `json:"warning,omitempty"`
	// Problem is what is wrong with a path that held a checkout when it
	// was set: the folder is gone, or no longer a work tree.
	Problem string `json:"problem,omitempty"`
}

// inspectTimeout bounds reading a checkout for a response.
const inspectTimeout = 15 * time.Second

func (a *App) toRepositoryJSON(ctx context.Context, r store.Repository) repositoryJSON {
	out := repositoryJSON{NodeID: r.NodeID, Name: r.FullName(), Owner: r.Owner, Repo: r.Name, Path: r.Path}
	if r.Path == "" {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	info, err := checkout.Inspect(ctx, r.Path)
	if err != nil {
		out.Checkout = &checkoutJSON{Git: checkout.GitInstalled(), Problem: fault.Sentence(err.Error())}
		return out
	}
	out.Checkout = &checkoutJSON{Git: info.Git, Branch: info.Branch, Head: info.Head, Origin: redact.Text(info.Origin),
		Warning: originWarning(r.FullName(), info.Origin)}
	return out
}

// originWarning says when the checkout's origin remote names another
// owner/name than the repository's.
func originWarning(fullName, origin string) string {
	if origin == "" {
		return ""
	}
	owner, name, ok := checkout.ParseRemote(origin)
	if !ok || strings.EqualFold(owner+"/"+name, fullName) {
		return ""
	}
	return fmt.Sprintf("This checkout's origin remote is %s/%s, not %s. The Planner reads it all the same; check it is the code this repository's plans are about.", owner, name, fullName)
}

// configNamed is the node ids of the repositories chopin.toml names.
func (a *App) configNamed(ctx context.Context) map[string]bool {
	named := map[string]bool{}
	for _, cr := range a.cfg.Repositories {
		owner, name, _ := strings.Cut(cr.Name, "/")
		if r, err := a.store.RepositoryByName(ctx, owner, name); err == nil {
			named[r.NodeID] = true
		}
	}
	return named
}

// personalRepository is the name the first run offers for plans not tied
// to code: the local account's login and "plans", as GitHub would spell
// a person's own repository, or me/plans when the account is the
// system's (root, Administrator), which names nobody.
func (a *App) personalRepository() string {
	owner := strings.ToLower(a.cfg.Login)
	if owner == "" || owner == "root" || owner == "administrator" {
		owner = "me"
	}
	return owner + "/plans"
}

func (a *App) handleRepositoryList(c echo.Context) error {
	ctx := c.Request().Context()
	repos, err := a.store.Repositories(ctx)
	if err != nil {
		return err
	}
	named := a.configNamed(ctx)
	out := make([]repositoryJSON, len(repos))
	for i, r := range repos {
		out[i] = a.toRepositoryJSON(ctx, r)
		out[i].Config = named[r.NodeID]
	}
	return c.JSON(http.StatusOK, map[string]any{"repositories": out, "personal": a.personalRepository()})
}

func (a *App) handleRepositoryGet(c echo.Context) error {
	r, err := a.repository(c)
	if err != nil {
		return err
	}
	out := a.toRepositoryJSON(c.Request().Context(), r)
	out.Config = a.configNamed(c.Request().Context())[r.NodeID]
	return c.JSON(http.StatusOK, out)
}

func (a *App) handleRepositoryCreate(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	path, err := checkoutPath(ctx, req.Path)
	if err != nil {
		return err
	}
	r, err := a.store.AddRepository(ctx, req.Name, path)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, a.toRepositoryJSON(ctx, r))
}

// handleRepositoryUpdate renames a repository, { "name": "owner/name" },
// and sets or clears its local checkout, { "path": "/abs/folder" } or
// { "path": "" }; either or both.
func (a *App) handleRepositoryUpdate(c echo.Context) error {
	var req struct {
		Name *string `json:"name"`
		Path *string `json:"path"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	if req.Path == nil && req.Name == nil {
		return badRequest("invalid-body", `Send { "name": "owner/name" } to rename it, or { "path": "/folder/of/the/checkout" } to set its checkout ({ "path": "" } clears it).`)
	}
	ctx := c.Request().Context()
	owner, name := c.Param("owner"), c.Param("repository")
	var path string
	if req.Path != nil {
		var err error
		if path, err = checkoutPath(ctx, *req.Path); err != nil {
			return err
		}
	}
	r, err := a.store.RepositoryByName(ctx, owner, name)
	if err != nil {
		return err
	}
	if req.Name != nil {
		if r, err = a.store.RenameRepository(ctx, owner, name, strings.TrimSpace(*req.Name)); err != nil {
			return err
		}
		a.repositoryRenamed(ctx, r)
	}
	if req.Path != nil {
		if r, err = a.store.SetRepositoryPath(ctx, r.Owner, r.Name, path); err != nil {
			return err
		}
	}
	out := a.toRepositoryJSON(ctx, r)
	out.Config = a.configNamed(ctx)[r.NodeID]
	return c.JSON(http.StatusOK, out)
}

// repositoryRenamed tells each open document of r its new name and address.
func (a *App) repositoryRenamed(ctx context.Context, r store.Repository) {
	ids, err := a.store.RepositoryChannelIDs(ctx, r.NodeID)
	if err != nil {
		a.log.Warn("list a renamed repository's documents", "err", err)
		return
	}
	for _, id := range ids {
		if ch, err := a.store.Channel(ctx, id); err == nil {
			a.hub.ChannelChanged(a.roomChannel(ch))
		}
	}
}

// handleRepositoryRemove removes a repository, with an explicit choice of
// what happens to its active documents: ?documents=refuse leaves it all as
// it was when it has any (409 repository-has-documents), and
// ?documents=archive archives them. Documents are never deleted.
func (a *App) handleRepositoryRemove(c echo.Context) error {
	var archive bool
	switch c.QueryParam("documents") {
	case "archive":
		archive = true
	case "refuse":
	default:
		return badRequest("invalid-query", "Say what happens to the repository's documents: ?documents=archive archives them, ?documents=refuse removes it only when none is active.")
	}
	ctx := c.Request().Context()
	_, archived, err := a.store.RemoveRepository(ctx, c.Param("owner"), c.Param("repository"), archive)
	if err != nil {
		return err
	}
	for _, ch := range archived {
		a.channelChanged(ch)
	}
	return c.NoContent(http.StatusNoContent)
}

// checkoutPath checks an optional local checkout path: an existing folder
// at the top of a Git work tree (with ~ for the home folder). It returns
// it absolute and clean, "" for none.
func checkoutPath(ctx context.Context, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	abs, err := checkout.Dir(ctx, p)
	if err != nil {
		return "", badRequest("invalid-path", fault.Sentence(err.Error()))
	}
	return abs, nil
}

// repository resolves the :owner/:repository of a route.
func (a *App) repository(c echo.Context) (store.Repository, error) {
	return a.store.RepositoryByName(c.Request().Context(), c.Param("owner"), c.Param("repository"))
}
