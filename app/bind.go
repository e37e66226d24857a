package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/textrule"
)

// bindStrict decodes a JSON request body into v, refusing unknown fields and
// trailing data, and text that is not UTF-8 (textrule.JSON). An empty body decodes as {}.
func bindStrict(c echo.Context, v any) error {
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	if err := textrule.JSON(raw); err != nil {
		// Decoding would replace the bad bytes with U+FFFD and keep text
		// nobody sent.
		return badRequest("invalid-json", "The request body "+err.Error()+"; send JSON text in UTF-8.")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return badRequest("invalid-json", "The request body is not the JSON this route takes: "+err.Error())
	}
	// Only white space may follow (More would let a stray "}" or "]" pass).
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("invalid-json", "The request body has data after its JSON object.")
	}
	return nil
}
