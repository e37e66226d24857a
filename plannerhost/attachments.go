package plannerhost

import (
	"encoding/base64"
	"strings"

	"github.com/google/uuid"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// The files a person sent with a message, in the turn that answers it (spec
// "Images and files in a turn"). A client granted attachments gets them in
// the turn's attachments, in the order sent: every text file, and an image
// only when the model the turn names (or the default model) lists image in
// its catalog inputTypes. Any other client's turn is what it always was: its
// text files are written into the prompt as <file name="..."> blocks, and an
// image it cannot be given is named in a line of words, never dropped
// without one. An image the model cannot read gets the same line.

// turnFiles puts m's files into req.
func (h *Host) turnFiles(documentID string, m room.Message, req *agentconn.TurnRequest) {
	files := room.MessageAttachments(m)
	if len(files) == 0 {
		return
	}
	h.giveFiles(files, m.Author, h.agent.Granted(documentID, wire.FeatureAttachments), h.readsImages(documentID, req.Model), req)
}

// steerPrompt is a steered message as the model reads it: a steer carries
// no attachments, so its files are words in the prompt.
func (h *Host) steerPrompt(m room.Message) string {
	req := agentconn.TurnRequest{Prompt: m.Text} // a system follow-up (MCP's invoke_planner as "system") has no author
	if m.Author != "" {
		req.Prompt = "@" + m.Author + ": " + m.Text
	}
	h.giveFiles(room.MessageAttachments(m), m.Author, false, false, &req)
	return req.Prompt
}

// giveFiles puts files into req: as attachments when the client takes them
// (feature) and, for images, the model reads them; as words otherwise.
func (h *Host) giveFiles(files []room.ChatAttachment, author string, feature, images bool, req *agentconn.TurnRequest) {
	var words strings.Builder
	for _, f := range files {
		switch {
		case feature && (f.Kind == room.AttachmentFile || images):
			req.Attachments = append(req.Attachments, wire.Attachment{ID: "a-" + uuid.NewString(), Name: f.Name,
				Kind: f.Kind, MediaType: f.MediaType, Size: f.Size, Data: f.Data})
		case f.Kind == room.AttachmentFile:
			text, _ := base64.StdEncoding.DecodeString(f.Data)
			words.WriteString("\n\n<file name=\"" + strings.ReplaceAll(f.Name, `"`, "&quot;") + "\">\n")
			words.Write(text)
			if len(text) > 0 && text[len(text)-1] != '\n' {
				words.WriteByte('\n')
			}
			words.WriteString("</file>")
		default:
			words.WriteString("\n\n(@" + author + " sent the image " + f.Name + " with this message. It could not be given to you, so you cannot see it; say so if it matters.)")
		}
	}
	req.Prompt += words.String()
}

// readsImages reports whether the model a turn names, or the default model
// when it names none, lists image in the catalog's inputTypes.
func (h *Host) readsImages(documentID, model string) bool {
	cat := h.agent.Catalog(documentID)
	if model == "" {
		model = h.DefaultModel(cat)
	}
	m, ok := cat.Model(model)
	return ok && m.Reads("image")
}
