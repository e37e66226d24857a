package app

// A domain error's status comes from its kind: the statuses docs/http-api.md
// documents for store and room codes.

import (
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

func TestRefusalStatus(t *testing.T) {
	a := &App{log: slog.New(slog.DiscardHandler)}
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/api/x", nil), httptest.NewRecorder())
	for _, tc := range []struct {
		err    error
		status int
	}{
		{&store.Error{Kind: store.ErrInvalid, Code: "invalid-title"}, 400},
		{&store.Error{Kind: store.ErrNotFound, Code: "channel-not-found"}, 404},
		{&store.Error{Kind: store.ErrConflict, Code: "title-taken"}, 409},
		{badRequest("invalid-json", "x"), 400},
		{&room.Error{Code: room.CodeInvalidArgument}, 400},
		{&room.Error{Code: room.CodeInvalidChanges}, 400},
		{&room.Error{Code: room.CodeInvalidAnswer}, 400},
		{&room.Error{Code: room.CodeInvalidQuestion}, 400},
		{&room.Error{Code: room.CodeReservedComponent}, 400},
		{&room.Error{Code: room.CodeEmptyDocument}, 400},
		{&room.Error{Code: room.CodeUnknownCommand}, 400},
		{&room.Error{Code: room.CodeInvalidAttachment}, 400},
		{&room.Error{Code: room.CodeReadOnly}, 403},
		{&room.Error{Code: room.CodeNotFound}, 404},
		{&room.Error{Code: room.CodeStaleRevision}, 409},
		{&room.Error{Code: room.CodeStaleVersion}, 409},
		{&room.Error{Code: room.CodeDocumentArchived}, 409},
		{&room.Error{Code: room.CodeDecisionClosed}, 409},
		{&room.Error{Code: room.CodePlannerNotAttached}, 409},
		{&room.Error{Code: room.CodePlannerBusy}, 409},
		{&room.Error{Code: room.CodeMessageTooLarge}, 413},
		{&room.Error{Code: room.CodeDocumentTooLarge}, 413},
		{&room.Error{Code: room.CodeInternal, Message: "detail"}, 500},
		{&room.Error{Code: "no-such-code", Message: "detail"}, 500},
	} {
		err := fmt.Errorf("wrapped: %w", tc.err)
		he := a.translate(err, c)
		if he.Status != tc.status {
			t.Errorf("%#v: status %d, want %d", tc.err, he.Status, tc.status)
		}
		if he.Status == 500 && (he.Code != "internal" || he.Message == "detail") {
			t.Errorf("%#v: a 500 says %s %q; its detail belongs in the log", tc.err, he.Code, he.Message)
		}
	}
}

// A full disk and a failing one, as SQLite reports them at run time, answer
// 507 storage-full and 503 storage-unavailable with their plain messages.
func TestStorageFailureStatus(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.Exec(`CREATE TABLE t (x BLOB)`)
	db.Exec(`PRAGMA max_page_count = 3`)
	_, full := db.Exec(`INSERT INTO t VALUES (zeroblob(100000))`)
	if full == nil {
		t.Fatal("the insert fit")
	}
	a := &App{log: slog.New(slog.DiscardHandler)}
	c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/api/x", nil), httptest.NewRecorder())
	for _, err := range []error{fmt.Errorf("save: %w", full), storageErr(fmt.Errorf("save: %w", full))} {
		he := a.translate(err, c)
		if he.Status != 507 || he.Code != "storage-full" || !strings.HasPrefix(he.Message, "The disk Chopin keeps its data on is full") {
			t.Errorf("%v: %d %s %q", err, he.Status, he.Code, he.Message)
		}
	}
}
