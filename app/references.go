package app

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleReferencedBy lists the documents whose Chat refers to this one
// (`#` references), the most recently referring first: the document's
// "Referenced by" in its header.
func (a *App) handleReferencedBy(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	from, err := a.store.ReferencedBy(c.Request().Context(), ch.ID)
	if err != nil {
		return err
	}
	out := make([]channelJSON, len(from))
	for i, f := range from {
		out[i] = toChannelJSON(f)
	}
	return c.JSON(http.StatusOK, struct {
		ReferencedBy []channelJSON `json:"referencedBy"`
	}{out})
}
