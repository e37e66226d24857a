package app

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/labstack/echo/v4"
)

// bindStrict decodes a JSON request body into v, refusing unknown fields and
// trailing data. An empty body decodes as {}.
func bindStrict(c echo.Context, v any) error {
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return badRequest("invalid-json", "The request body is not the JSON this route takes: "+err.Error())
	}
	if dec.More() {
		return badRequest("invalid-json", "The request body has data after its JSON object.")
	}
	return nil
}
