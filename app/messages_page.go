package app

// Chat over HTTP in pages (docs/http-api.md): the messages before a cursor,
// back to the first, and a long message's text page by page. Both answer
// messages as the room's frames carry them (room.ForFrame), so a browser
// never receives a whole long message in one piece.

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/room"
)

// handleMessageList answers the newest limit messages, or with before the
// limit messages older than the cursor, oldest first, and the cursor of
// the page older still (null once the first message is in the answer).
func (a *App) handleMessageList(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	limit := 200
	if s := c.QueryParam("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > 1000 {
			return badRequest("invalid-limit", "limit must be a whole number from 1 to 1000")
		}
	}
	before := int64(1) << 62
	if s, ok := c.QueryParams()["before"]; ok {
		var ok bool
		if before, ok = room.ParseMessageCursor(s[0]); !ok {
			return badRequest("invalid-cursor", "the cursor is not one this server gave out; start again without it")
		}
	}
	ms, more, err := a.store.MessagesBefore(c.Request().Context(), ch.ID, before, limit)
	if err != nil {
		return err
	}
	out := make([]room.FrameMessage, len(ms))
	for i, m := range ms {
		out[i] = room.ForFrame(room.Message(m))
	}
	var next *string
	if more {
		cur := room.MessageCursor(ms[0].Seq)
		next = &cur
	}
	return c.JSON(http.StatusOK, map[string]any{"messages": out, "before": next})
}

// handleMessageGet answers one message whole, never cut: for a client that
// wants every byte of a long reply's details at once.
func (a *App) handleMessageGet(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	m, err := a.store.Message(c.Request().Context(), ch.ID, c.Param("messageId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, room.Message(m))
}

// handleMessageText answers one page of a message's text or reasoning,
// from a byte offset a cut frame or an earlier page gave.
func (a *App) handleMessageText(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	field := c.QueryParam("field")
	if field == "" {
		field = "text"
	}
	from := 0
	if s := c.QueryParam("from"); s != "" {
		if from, err = strconv.Atoi(s); err != nil {
			return badRequest("invalid-offset", "from must be a whole number of bytes, as a page's next gave it")
		}
	}
	m, err := a.store.Message(c.Request().Context(), ch.ID, c.Param("messageId"))
	if err != nil {
		return err
	}
	if field != "text" && field != "reasoning" {
		return badRequest("invalid-argument", `field is "text" or "reasoning"`)
	}
	p, ok := room.ReadTextPage(room.Message(m), field, from, room.MessageTextPageBytes)
	if !ok {
		return badRequest("invalid-offset", "from must be where a character of the "+field+" starts, as a page's next gave it")
	}
	return c.JSON(http.StatusOK, p)
}
