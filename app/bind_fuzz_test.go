package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/fault"
)

// FuzzJSONBodies holds every route's body decoding to its rules, whatever
// the bytes: it never panics; a body it takes is valid UTF-8 and one JSON
// value whose fields the route knows; one it refuses is 400 invalid-json.
func FuzzJSONBodies(f *testing.F) {
	for _, s := range []string{
		`{"revision": 0, "source": "# Plan\n"}`, `{"title": "Launch"}`, `{}`, ``, `{"title": "a"} x`,
		`{"unknown": 1}`, "{\"title\": \"\xff\"}", `{"revision": "0"}`, `[1,2]`, `null`, `{"title":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		var req struct {
			Revision *int64  `json:"revision"`
			Source   *string `json:"source"`
			Title    *string `json:"title"`
		}
		c := e.NewContext(httptest.NewRequest(http.MethodPost, "/api/x", bytes.NewReader(body)), httptest.NewRecorder())
		err := bindStrict(c, &req)
		if err != nil {
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.Invalid || fe.Code != "invalid-json" {
				t.Fatalf("%q refused with %v", body, err)
			}
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("took %q, which is not UTF-8", body)
		}
		if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
			t.Fatalf("took %q, which is not one JSON value", body)
		}
	})
}
