package app

import (
	"net/http"
	"os"
	"path/filepath"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/store"
)

type repositoryJSON struct {
	NodeID string `json:"nodeId"`
	Name   string `json:"name"` // owner/name
	Owner  string `json:"owner"`
	Repo   string `json:"repository"`
	Path   string `json:"path,omitempty"`
}

func toRepositoryJSON(r store.Repository) repositoryJSON {
	return repositoryJSON{NodeID: r.NodeID, Name: r.FullName(), Owner: r.Owner, Repo: r.Name, Path: r.Path}
}

func (a *App) handleRepositoryList(c echo.Context) error {
	repos, err := a.store.Repositories(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]repositoryJSON, len(repos))
	for i, r := range repos {
		out[i] = toRepositoryJSON(r)
	}
	return c.JSON(http.StatusOK, map[string]any{"repositories": out})
}

func (a *App) handleRepositoryCreate(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	path, err := checkoutPath(req.Path)
	if err != nil {
		return err
	}
	r, err := a.store.AddRepository(c.Request().Context(), req.Name, path)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toRepositoryJSON(r))
}

// checkoutPath checks that an optional local checkout path names an existing
// directory, and makes it absolute.
func checkoutPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", badRequest("invalid-path", "the path "+p+" cannot be resolved")
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", badRequest("invalid-path", "the path "+abs+" does not exist")
	}
	if !st.IsDir() {
		return "", badRequest("invalid-path", "the path "+abs+" is not a directory")
	}
	return abs, nil
}

// repository resolves the :owner/:repository of a route.
func (a *App) repository(c echo.Context) (store.Repository, error) {
	return a.store.RepositoryByName(c.Request().Context(), c.Param("owner"), c.Param("repository"))
}
