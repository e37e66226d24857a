package plannerhost

import (
	"encoding/json"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/redact"
	"github.com/chopin-desktop/chopin/room"
)

// A tool row as Chat stores and shows it (spec "Structured tool errors",
// "Images a tool made"): credentials masked in its input, result and error
// message; a structured tool error shown as Failed with its kind or code
// and message; an image result shown as its text blocks and how many images
// it carried, never their bytes. None of this changes what crosses the
// connection: agentconn has already sent the client its output.

// toolRowOf is the row of e.
func toolRowOf(e agentconn.ToolCallEvent) room.ToolRow {
	row := room.ToolRow{ID: e.ToolCallID, Name: e.Name, Host: e.Host, Status: e.Status,
		DurationMs: e.Duration.Milliseconds(),
		Input:      redact.JSON(e.Input),
		Result:     redact.JSON(withoutImageBytes(e.Result))}
	if te := e.Error; te != nil && maskKeeps(te.Code) && (te.Kind == "" || maskKeeps(te.Kind)) {
		row.Error = &room.ToolRowError{Code: te.Code, Kind: te.Kind, Message: redact.Text(te.Message)}
	}
	return row
}

// maskKeeps reports whether masking leaves an envelope's code or kind as
// written: an envelope whose code or kind it would change is not
// recognised, and is shown as an ordinary (masked) result.
func maskKeeps(s string) bool { return redact.Text(s) == s }

// withoutImageBytes is a result whose content array holds image blocks as
// Work details shows it: {"text": [the text blocks], "images": n}. Any
// other result is returned as it is.
func withoutImageBytes(result json.RawMessage) json.RawMessage {
	raw := result
	var text string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &text) == nil {
		raw = json.RawMessage(text)
	}
	var shape struct {
		Content []json.RawMessage `json:"content"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &shape) != nil || shape.Content == nil {
		return result
	}
	summary := struct {
		Text   []string `json:"text"`
		Images int      `json:"images"`
	}{Text: []string{}}
	for _, b := range shape.Content {
		var block struct {
			Type *string `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(b, &block) != nil || block.Type == nil {
			continue
		}
		switch *block.Type {
		case "text":
			if block.Text != nil {
				summary.Text = append(summary.Text, *block.Text)
			}
		case "image":
			summary.Images++
		}
	}
	if summary.Images == 0 {
		return result
	}
	out, err := marshal(summary)
	if err != nil {
		return result
	}
	return out
}
