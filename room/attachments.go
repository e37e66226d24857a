package room

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/picture"
)

// Images and text files a person sends with a message (spec "Images and
// files in a turn"). Chopin decides what a file is from its bytes, never its
// name: a PNG, JPEG, WebP or GIF is an image kept under its own type; any
// other file that is UTF-8 text is a text file, kept as text/plain whatever
// it was called (so never HTML or SVG); anything else is refused. The files
// are kept in the message's details, in the order sent, and go to the
// Planner with the turn that answers the message.

// AttachmentUpload is one file as a person sends it: its name and its bytes
// in standard base64.
type AttachmentUpload struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// ChatAttachment is a kept file, as the message's details hold it.
type ChatAttachment struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"` // image or file
	MediaType string `json:"mediaType"`
	Size      int    `json:"size"`
	Data      string `json:"data"` // the bytes, standard base64
}

// Attachment kinds.
const (
	AttachmentImage = "image"
	AttachmentFile  = "file"
)

// AttachmentLimits bound the files of one message.
type AttachmentLimits struct {
	MaxBytes int64 // one file (CHAT_ATTACHMENT_MAX_BYTES)
	MaxTotal int64 // all of a message's files (CHAT_ATTACHMENT_MAX_TOTAL_BYTES)
}

const (
	// MaxAttachments is the most files one message carries.
	MaxAttachments = 20
	// MaxAttachmentTotal is the most bytes, before base64, a message's files
	// hold under any configuration: with a prompt and the tools they always
	// fit the agent connection's 2 MiB frame.
	MaxAttachmentTotal = 1 << 20
	// maxAttachmentName is the longest name kept, in characters.
	maxAttachmentName = 255
)

// ReadAttachments checks a message's files and returns them as kept.
func ReadAttachments(ups []AttachmentUpload, lim AttachmentLimits) ([]ChatAttachment, error) {
	if len(ups) > MaxAttachments {
		return nil, errorf(CodeInvalidAttachment, "A message carries at most %d files; this one has %d.", MaxAttachments, len(ups))
	}
	maxBytes, maxTotal := lim.MaxBytes, lim.MaxTotal
	if maxBytes <= 0 || maxBytes > MaxAttachmentTotal {
		maxBytes = MaxAttachmentTotal
	}
	if maxTotal <= 0 || maxTotal > MaxAttachmentTotal {
		maxTotal = MaxAttachmentTotal
	}
	out := make([]ChatAttachment, 0, len(ups))
	var total int64
	for i, up := range ups {
		name := CleanAttachmentName(up.Name)
		data, err := base64.StdEncoding.DecodeString(up.Data)
		if err != nil {
			data, err = base64.RawStdEncoding.DecodeString(up.Data)
		}
		if err != nil {
			return nil, errorf(CodeInvalidAttachment, "File %d (%s) is not standard base64.", i+1, name)
		}
		if int64(len(data)) > maxBytes {
			return nil, errorf(CodeMessageTooLarge, "File %d (%s) has %d bytes; a file holds at most %d.", i+1, name, len(data), maxBytes)
		}
		if total += int64(len(data)); total > maxTotal {
			return nil, errorf(CodeMessageTooLarge, "A message's files hold at most %d bytes together; these have more.", maxTotal)
		}
		a := ChatAttachment{Name: name, Size: len(data), Data: base64.StdEncoding.EncodeToString(data)}
		switch t := picture.Sniff(data); {
		case t == picture.PNG || t == picture.JPEG || t == picture.WebP || t == picture.GIF:
			a.Kind, a.MediaType = AttachmentImage, t.MimeType()
		case t == nil && isText(data):
			a.Kind, a.MediaType = AttachmentFile, "text/plain"
		default:
			return nil, errorf(CodeInvalidAttachment, "File %d (%s) is neither a PNG, JPEG, WebP or GIF image nor a text file.", i+1, name)
		}
		out = append(out, a)
	}
	return out, nil
}

// isText reports whether data reads as UTF-8 text: valid, and without the
// NUL and other control bytes only binary files hold.
func isText(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	for _, b := range data {
		if b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != '\f' || b == 0x7f {
			return false
		}
	}
	return true
}

// CleanAttachmentName is a file's name as a label: no folder, no control
// characters, at most 255 characters; "file" when nothing is left.
func CleanAttachmentName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxAttachmentName {
		s = string([]rune(s)[:maxAttachmentName])
	}
	if s == "" || s == "." || s == ".." {
		return "file"
	}
	return s
}

// personDetails are a person's message's details.
type personDetails struct {
	Attachments []ChatAttachment `json:"attachments,omitempty"`
	References  []Reference      `json:"references,omitempty"` // references.go
}

// MessageAttachments returns the files a person's message carries.
func MessageAttachments(m Message) []ChatAttachment {
	if m.Role != RolePerson || len(m.Details) == 0 {
		return nil
	}
	var d personDetails
	if json.Unmarshal(m.Details, &d) != nil {
		return nil
	}
	return d.Attachments
}
