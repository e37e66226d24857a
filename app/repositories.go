package app

// The repositories routes: list, register, set a repository's local
// checkout, and read one with what its checkout holds (docs/http-api.md).

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

func (a *App) handleRepositoryList(c echo.Context) error {
	ctx := c.Request().Context()
	repos, err := a.store.Repositories(ctx)
	if err != nil {
		return err
	}
	out := make([]repositoryJSON, len(repos))
	for i, r := range repos {
		out[i] = a.toRepositoryJSON(ctx, r)
	}
	return c.JSON(http.StatusOK, map[string]any{"repositories": out})
}

func (a *App) handleRepositoryGet(c echo.Context) error {
	r, err := a.repository(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.toRepositoryJSON(c.Request().Context(), r))
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

// handleRepositoryUpdate sets or clears a repository's local checkout:
// { "path": "/abs/folder" } or { "path": "" }.
func (a *App) handleRepositoryUpdate(c echo.Context) error {
	var req struct {
		Path *string `json:"path"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	if req.Path == nil {
		return badRequest("invalid-body", `Send { "path": "/folder/of/the/checkout" }, or { "path": "" } to clear it.`)
	}
	ctx := c.Request().Context()
	path, err := checkoutPath(ctx, *req.Path)
	if err != nil {
		return err
	}
	r, err := a.store.SetRepositoryPath(ctx, c.Param("owner"), c.Param("repository"), path)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.toRepositoryJSON(ctx, r))
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
