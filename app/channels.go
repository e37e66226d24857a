package app

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/ident"
	"github.com/chopin-desktop/chopin/store"
)

// channelJSON is a document as the catalog routes show it.
type channelJSON struct {
	ID                  string  `json:"id"`
	Title               string  `json:"title"`
	Slug                string  `json:"slug"`
	Repository          string  `json:"repository"`
	URL                 string  `json:"url"`
	ArchivedAt          *string `json:"archivedAt"`
	CreatedAt           string  `json:"createdAt"`
	UpdatedAt           string  `json:"updatedAt"`
	Description         *string `json:"description,omitempty"`
	DescriptionRevision int64   `json:"descriptionRevision"`
	ParentChannelID     string  `json:"parentChannelId,omitempty"`
}

func toChannelJSON(ch store.Channel) channelJSON {
	out := channelJSON{
		ID:                  ch.ID,
		Title:               ch.Title,
		Slug:                ch.Slug,
		Repository:          ch.Repository,
		URL:                 documentPath(ch),
		CreatedAt:           rfc3339(ch.CreatedAt),
		UpdatedAt:           rfc3339(ch.UpdatedAt),
		Description:         ch.Description,
		DescriptionRevision: ch.DescriptionRevision,
		ParentChannelID:     ch.ParentChannelID,
	}
	if ch.Archived() {
		at := rfc3339(ch.ArchivedAt)
		out.ArchivedAt = &at
	}
	return out
}

// documentPath is a document's readable browser route.
func documentPath(ch store.Channel) string {
	p := "/documents/" + ch.Repository + "/"
	if ch.ParentSlug != "" {
		p += url.PathEscape(ch.ParentSlug) + "/children/"
	}
	return p + url.PathEscape(ch.Slug)
}

func rfc3339(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// channel resolves the :channelId of a route.
func (a *App) channel(c echo.Context) (store.Channel, error) {
	id := c.Param("channelId")
	if !ident.ValidDocumentID(id) {
		return store.Channel{}, badRequest("invalid-channel-id", "The document ID "+strconv.Quote(id)+" is not a lowercase UUID.")
	}
	return a.store.Channel(c.Request().Context(), id)
}

// writableChannel resolves the route's document for a request that changes
// it: the caller must be allowed to (canWrite).
func (a *App) writableChannel(c echo.Context) (store.Channel, error) {
	ch, err := a.channel(c)
	if err != nil {
		return store.Channel{}, err
	}
	return ch, a.canWrite(c)
}

func (a *App) handleChannelList(c echo.Context) error {
	repo, err := a.repository(c)
	if err != nil {
		return err
	}
	q, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		// A query that does not parse would lose its cursor and quietly
		// start again from the first page.
		if strings.Contains(c.Request().URL.RawQuery, "cursor=") {
			return badRequest("invalid-cursor", "the cursor is not one this server gave out")
		}
		return badRequest("invalid-argument", "The query string is not well-formed: "+err.Error())
	}
	opt := store.ListOptions{Query: q.Get("query"), Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		if opt.Limit, err = strconv.Atoi(s); err != nil || opt.Limit < 1 {
			return badRequest("invalid-limit", "limit must be a whole number from 1 to 100")
		}
	}
	switch q.Get("includeArchived") {
	case "", "false":
	case "true":
		opt.IncludeArchived = true
	default:
		return badRequest("invalid-include-archived", "includeArchived must be true or false")
	}
	page, err := a.store.ListChannels(c.Request().Context(), repo.NodeID, opt)
	if err != nil {
		return err
	}
	out := struct {
		Channels   []channelJSON `json:"channels"`
		NextCursor *string       `json:"nextCursor"`
	}{Channels: make([]channelJSON, len(page.Channels))}
	for i, ch := range page.Channels {
		out.Channels[i] = toChannelJSON(ch)
	}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	return c.JSON(http.StatusOK, out)
}

func (a *App) handleChannelCreate(c echo.Context) error {
	repo, err := a.repository(c)
	if err != nil {
		return err
	}
	if err := a.canWrite(c); err != nil {
		return err
	}
	var req struct {
		Title string `json:"title"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	ch, err := a.store.CreateChannel(c.Request().Context(), repo.NodeID, req.Title)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, documentPath(ch))
	return c.JSON(http.StatusCreated, toChannelJSON(ch))
}

func (a *App) handleChannelBySlug(c echo.Context) error {
	repo, err := a.repository(c)
	if err != nil {
		return err
	}
	ch, err := a.store.ChannelBySlug(c.Request().Context(), repo.NodeID, c.Param("slug"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toChannelJSON(ch))
}

func (a *App) handleChannelGet(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toChannelJSON(ch))
}

func (a *App) handleChannelRename(c echo.Context) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	var req struct {
		Title *string `json:"title"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	if req.Title == nil {
		return badRequest("invalid-title", "Send the new title as {\"title\": \"...\"}.")
	}
	ch, changed, err := a.store.RenameChannel(c.Request().Context(), ch.ID, *req.Title)
	if err != nil {
		return err
	}
	if changed {
		a.channelChanged(ch)
	}
	return c.JSON(http.StatusOK, toChannelJSON(ch))
}

func (a *App) handleChannelArchive(c echo.Context) error {
	return a.setArchived(c, a.store.ArchiveChannel)
}

func (a *App) handleChannelRestore(c echo.Context) error {
	return a.setArchived(c, a.store.RestoreChannel)
}

func (a *App) setArchived(c echo.Context, transition func(ctx context.Context, id string) (store.Channel, bool, error)) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	ch, changed, err := transition(c.Request().Context(), ch.ID)
	if err != nil {
		return err
	}
	if changed {
		a.channelChanged(ch)
	}
	return c.JSON(http.StatusOK, toChannelJSON(ch))
}

func (a *App) handleChannelDelete(c echo.Context) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	if !ch.Archived() {
		return httpError(http.StatusConflict, "channel-not-archived", "Archive this document before deleting it.")
	}
	a.channelDeleting(ch)
	if err := a.store.DeleteChannel(c.Request().Context(), ch.ID); err != nil {
		return err
	}
	a.channelDeleted(ch)
	return c.NoContent(http.StatusNoContent)
}

func (a *App) handlePlannerReset(c echo.Context) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	a.plannerReset(ch)
	return c.NoContent(http.StatusNoContent)
}
