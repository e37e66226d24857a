package app

// Errors as clients see them: one echo error handler turns every error into
// a status and a JSON {code, message} (docs/http-api.md, "Errors"); a domain
// refusal's status comes from its kind alone.

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// HTTPError is an error with the status, code and message a client sees,
// for what only HTTP knows of: sign-in, origins, routes. A domain refusal is
// a fault.Error (store's among them) or a room.Error instead, whose kind
// gives the status. Anything else becomes a 500 with a generic message; its
// detail goes to the log only.
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

// badRequest refuses a request the app itself finds malformed.
func badRequest(code, message string) error {
	return &fault.Error{Kind: fault.Invalid, Code: code, Message: message}
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
		c.HTML(he.Status, signInPage("This browser is not signed in to Chopin.", a.sameOriginPath(c.Request().URL.RequestURI())))
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
	var fe *fault.Error
	if errors.As(err, &fe) {
		if fe.Kind == fault.StorageFull || fe.Kind == fault.StorageUnavailable {
			a.log.Error("storage failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		}
		return a.refusal(fe.Kind, fe.Code, fe.Message, err, c)
	}
	var re *room.Error
	if errors.As(err, &re) {
		return a.refusal(re.Kind(), re.Code, re.Message, err, c)
	}
	if sf := store.StorageFault(err); sf != nil {
		a.log.Error("storage failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		errors.As(sf, &fe)
		return a.refusal(fe.Kind, fe.Code, fe.Message, sf, c)
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
	return a.internal(err, c)
}

// kindStatus is the HTTP status of each kind of refusal: the one place a
// domain error becomes a status. Codes have no statuses of their own.
// fault.Internal has none: it is answered as any unexpected error is.
var kindStatus = map[fault.Kind]int{
	fault.Invalid:   http.StatusBadRequest,
	fault.NotFound:  http.StatusNotFound,
	fault.Conflict:  http.StatusConflict,
	fault.TooLarge:  http.StatusRequestEntityTooLarge,
	fault.Forbidden: http.StatusForbidden,
	// A full or failing disk is no fault of the request; it says so.
	fault.StorageFull:        http.StatusInsufficientStorage,
	fault.StorageUnavailable: http.StatusServiceUnavailable,
}

// refusal is a domain error as the client sees it: the status its kind has,
// its own code and message.
func (a *App) refusal(kind fault.Kind, code, message string, err error, c echo.Context) *HTTPError {
	status, ok := kindStatus[kind]
	if !ok {
		return a.internal(err, c)
	}
	return httpError(status, code, message)
}

// internal is Chopin's own failure: 500 with a generic message; the detail
// goes to the log only.
func (a *App) internal(err error, c echo.Context) *HTTPError {
	a.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	return httpError(http.StatusInternalServerError, "internal", "Something went wrong inside Chopin; the log has the details.")
}
