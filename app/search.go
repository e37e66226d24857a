package app

// GET /api/search (docs/http-api.md): documents whose title, description or
// plan text holds the query, across every repository or in one, each with
// the line that matched. The documents page and the quick switcher ask it.

import (
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/ident"
	"github.com/chopin-desktop/chopin/store"
)

type searchMatchJSON struct {
	Field string `json:"field"` // title, description or plan
	Line  int    `json:"line"`
	Text  string `json:"text"`
}

type searchResultJSON struct {
	Channel    channelJSON     `json:"channel"`
	Repository string          `json:"repository"`
	Match      searchMatchJSON `json:"match"`
}

func (a *App) handleSearch(c echo.Context) error {
	q, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return badRequest("invalid-argument", "The query string is not well-formed: "+err.Error())
	}
	opt := store.SearchOptions{Query: q.Get("q")}
	if s := q.Get("limit"); s != "" {
		if opt.Limit, err = strconv.Atoi(s); err != nil || opt.Limit < 1 || opt.Limit > store.MaxSearchLimit {
			return badRequest("invalid-limit", "limit must be a whole number from 1 to "+strconv.Itoa(store.MaxSearchLimit))
		}
	}
	ctx := c.Request().Context()
	if full := q.Get("repository"); full != "" {
		owner, name, err := ident.ParseRepository(full)
		if err != nil {
			return err
		}
		repo, err := a.store.RepositoryByName(ctx, owner, name)
		if err != nil {
			return err
		}
		opt.RepositoryNodeID = repo.NodeID
	}
	found, err := a.store.Search(ctx, opt)
	if err != nil {
		return err
	}
	out := struct {
		Results []searchResultJSON `json:"results"`
	}{Results: make([]searchResultJSON, len(found))}
	for i, r := range found {
		out.Results[i] = searchResultJSON{
			Channel:    toChannelJSON(r.Channel),
			Repository: r.Channel.Repository,
			Match:      searchMatchJSON{Field: r.Match.Field, Line: r.Match.Line, Text: r.Match.Text},
		}
	}
	return c.JSON(200, out)
}
