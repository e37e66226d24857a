package app

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// HTTPError is an error with the status, code and message a client sees.
// Anything that is not an HTTPError (or a store error) becomes a 500 with a
// generic message; its detail goes to the log only.
type HTTPError struct {
	Status  int
	Code    string
	Message string
}

func (e *HTTPError) Error() string { return e.Message }

func httpError(status int, code, message string) *HTTPError {
	return &HTTPError{Status: status, Code: code, Message: message}
}

var (
	errSignInRequired  = httpError(http.StatusUnauthorized, "unauthorized", "Sign in by opening Chopin with `chopin open`, or send the agent token as a bearer.")
	errForbiddenOrigin = httpError(http.StatusForbidden, "forbidden-origin", "This request must come from Chopin's own page (its Origin header does not match).")
	errForbiddenHost   = httpError(http.StatusForbidden, "forbidden-host", "This request was addressed to another host name; open Chopin at its own address.")
	errNotFound        = httpError(http.StatusNotFound, "not-found", "There is nothing at this address.")
	errResearch        = httpError(http.StatusNotFound, "research-unavailable", "Web research is not available in Chopin desktop: it needs the network.")
)

func badRequest(code, message string) *HTTPError {
	return httpError(http.StatusBadRequest, code, message)
}

// handleError is echo's one error handler: it turns every error into a
// status and a JSON {code, message} (or, for a browser page, a small HTML
// page), and logs what the client is not told.
func (a *App) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	he := a.translate(err, c)
	if he.Status == http.StatusUnauthorized && !strings.HasPrefix(c.Request().URL.Path, "/api/") {
		c.HTML(he.Status, signInPage("This browser is not signed in to Chopin."))
		return
	}
	if c.Request().Method == http.MethodHead {
		c.NoContent(he.Status)
		return
	}
	c.JSON(he.Status, map[string]string{"code": he.Code, "message": he.Message})
}

func (a *App) translate(err error, c echo.Context) *HTTPError {
	var he *HTTPError
	if errors.As(err, &he) {
		return he
	}
	var se *store.Error
	if errors.As(err, &se) {
		status := http.StatusBadRequest
		switch {
		case errors.Is(se.Kind, store.ErrNotFound):
			status = http.StatusNotFound
		case errors.Is(se.Kind, store.ErrConflict):
			status = http.StatusConflict
		}
		return httpError(status, se.Code, se.Message)
	}
	var re *room.Error
	if errors.As(err, &re) {
		return httpError(roomErrorStatus(re.Code), re.Code, re.Message)
	}
	var ee *echo.HTTPError
	if errors.As(err, &ee) {
		switch ee.Code {
		case http.StatusNotFound:
			return errNotFound
		case http.StatusMethodNotAllowed:
			return httpError(ee.Code, "method-not-allowed", "This address does not accept "+c.Request().Method+".")
		case http.StatusRequestEntityTooLarge:
			return httpError(ee.Code, "too-large", "The request body is too large.")
		}
		if ee.Code < 500 {
			return httpError(ee.Code, "bad-request", http.StatusText(ee.Code))
		}
	}
	a.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	return httpError(http.StatusInternalServerError, "internal", "Something went wrong inside Chopin; the log has the details.")
}

// roomErrorStatus is the HTTP status of a room's refusal.
func roomErrorStatus(code string) int {
	switch code {
	case room.CodeNotFound:
		return http.StatusNotFound
	case room.CodeStaleRevision, room.CodeStaleVersion, room.CodeDocumentArchived, room.CodeDecisionClosed,
		room.CodePlannerNotAttached, room.CodePlannerBusy:
		return http.StatusConflict
	case room.CodeMessageTooLarge, room.CodeDocumentTooLarge:
		return http.StatusRequestEntityTooLarge
	case room.CodeReadOnly:
		return http.StatusForbidden
	case room.CodeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}
