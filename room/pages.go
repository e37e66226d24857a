package room

// Long messages in pages: no frame a browser receives holds a whole long
// message. A message whose JSON is over MessageFrameBytes is sent cut (its
// text and reasoning to their first page, its tool rows without their
// inputs and results) with a "cut" marker, and the rest of its text is read
// over HTTP page by page (docs/room-protocol.md "Long messages",
// docs/http-api.md GET .../messages/:messageId/text).

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MessageCursor is the opaque cursor of the Chat page before message seq:
// what chat:snapshot and the messages route give out.
func MessageCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("before:" + strconv.FormatInt(seq, 10)))
}

// ParseMessageCursor reads a cursor MessageCursor gave out.
func ParseMessageCursor(s string) (seq int64, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, false
	}
	n, ok := strings.CutPrefix(string(raw), "before:")
	if !ok {
		return 0, false
	}
	seq, err = strconv.ParseInt(n, 10, 64)
	if err != nil || seq <= 0 || n != strconv.FormatInt(seq, 10) {
		return 0, false
	}
	return seq, true
}

const (
	// MaxChatFrameBytes bounds every Chat frame a browser receives
	// (chat:snapshot, chat:message): a cut message is at most a page of
	// text and one of reasoning, its bare tool rows, and a person's files
	// (at most 1 MiB, so 1.4 MiB as base64).
	MaxChatFrameBytes = 2 << 20
	// MessageFrameBytes is the most a message's JSON may hold before it is
	// sent cut; so is one whose text or details are over a page.
	MessageFrameBytes = 64 << 10
	// MessagePageBytes is how much text one page holds: the first page goes
	// in the frame, the others come from the HTTP route.
	MessagePageBytes = 32 << 10
	// MessageTextPageBytes is how much text a page read over HTTP holds.
	MessageTextPageBytes = 64 << 10
	// maxCutErrorMessage bounds a bare tool row's error message.
	maxCutErrorMessage = 512
)

// FrameMessage is a Message as a browser receives it: cut when long.
type FrameMessage struct {
	Message
	Cut *MessageCut `json:"cut,omitempty"`
}

// MessageCut says what of a message was left out of its frame.
type MessageCut struct {
	Text      *FieldCut `json:"text,omitempty"`      // text holds only its first page
	Reasoning *FieldCut `json:"reasoning,omitempty"` // details.reasoning holds only its first page
	Tools     bool      `json:"tools,omitempty"`     // tool rows come without input and result
}

// FieldCut is where a cut field stops: Next is the byte offset (UTF-8) of
// the first byte left out, Size the field's whole length in bytes.
type FieldCut struct {
	Next int `json:"next"`
	Size int `json:"size"`
}

// ForFrame is m as a frame carries it: as it is when short, else cut.
func ForFrame(m Message) FrameMessage {
	if len(m.Text) <= MessagePageBytes && len(m.Details) <= MessagePageBytes {
		if raw, _ := json.Marshal(m); len(raw) <= MessageFrameBytes {
			return FrameMessage{Message: m}
		}
	}
	cut := &MessageCut{}
	if len(m.Text) > MessagePageBytes {
		n := pageEnd(m.Text, 0, MessagePageBytes)
		cut.Text = &FieldCut{Next: n, Size: len(m.Text)}
		m.Text = m.Text[:n]
	}
	if len(m.Details) > 0 {
		m.Details = cutDetails(m.Details, cut)
	}
	if *cut == (MessageCut{}) {
		cut = nil // only a person's files made it long: they go whole
	}
	return FrameMessage{Message: m, Cut: cut}
}

// ForFrames is ForFrame of each.
func ForFrames(ms []Message) []FrameMessage {
	out := make([]FrameMessage, len(ms))
	for i, m := range ms {
		out[i] = ForFrame(m)
	}
	return out
}

// cutDetails keeps the first page of the reasoning and the tool rows bare;
// every other field (files, images, the failure) is kept as it is.
func cutDetails(raw json.RawMessage, cut *MessageCut) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return nil // our own encoding; a damaged one is shown without details
	}
	var reasoning string
	if json.Unmarshal(fields["reasoning"], &reasoning) == nil && len(reasoning) > MessagePageBytes {
		n := pageEnd(reasoning, 0, MessagePageBytes)
		cut.Reasoning = &FieldCut{Next: n, Size: len(reasoning)}
		fields["reasoning"], _ = json.Marshal(reasoning[:n])
	}
	var rows []ToolRow
	if json.Unmarshal(fields["tools"], &rows) == nil && len(rows) > 0 {
		for i := range rows {
			rows[i].Input, rows[i].Result = nil, nil
			if e := rows[i].Error; e != nil && len(e.Message) > maxCutErrorMessage {
				short := *e
				short.Message = short.Message[:pageEnd(e.Message, 0, maxCutErrorMessage)] + "…"
				rows[i].Error = &short
			}
		}
		cut.Tools = true
		fields["tools"], _ = json.Marshal(rows)
	}
	out, _ := json.Marshal(fields)
	return out
}

// pageEnd is the end of the page of s that starts at from and holds at most
// size bytes, never inside a character.
func pageEnd(s string, from, size int) int {
	end := from + size
	if end >= len(s) {
		return len(s)
	}
	for end > from && !utf8.RuneStart(s[end]) {
		end--
	}
	return end
}

// TextPage is one page of a message's text or reasoning.
type TextPage struct {
	Field string `json:"field"`
	Text  string `json:"text"`
	From  int    `json:"from"`
	Next  *int   `json:"next"` // where the next page starts; null after the last
	Size  int    `json:"size"`
}

// ReadTextPage is the page of m's field ("text" or "reasoning") that starts
// at byte from and holds at most size bytes; ok is false for another field
// or an offset that is not the start of a character within the field.
func ReadTextPage(m Message, field string, from, size int) (p TextPage, ok bool) {
	var s string
	switch field {
	case "text":
		s = m.Text
	case "reasoning":
		var d struct {
			Reasoning string `json:"reasoning"`
		}
		if len(m.Details) > 0 {
			json.Unmarshal(m.Details, &d) // our own encoding; a damaged one has no reasoning
		}
		s = d.Reasoning
	default:
		return TextPage{}, false
	}
	if from < 0 || from > len(s) || (from < len(s) && !utf8.RuneStart(s[from])) {
		return TextPage{}, false
	}
	end := pageEnd(s, from, size)
	p = TextPage{Field: field, Text: s[from:end], From: from, Size: len(s)}
	if end < len(s) {
		p.Next = &end
	}
	return p, true
}
