package plannerhost

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/room"
)

// Images a turn made (spec "Images a tool made", "Option previews"): the
// image blocks of an own tool's final successful result, and each image
// upload_plan_image stored, become the document's own images and show on
// the turn's Planner message in the order they were made. Reading,
// checking, shrinking and storing them is CPU and disk work, so it runs
// in a goroutine per result, chained so the images keep their order and
// the reply ends only after the last of them; the room's lock is taken
// only to place the stored images.

// toolImages queues the images of a finished call for the reply.
func (s *replySink) toolImages(e agentconn.ToolCallEvent) {
	if e.Status != agentconn.ToolDone {
		return // a failed (or preliminary) result shows no images
	}
	switch {
	case !e.Host:
		result := e.Result
		s.later(func() { s.reply.AddImages(s.h.storeToolImages(s.document, result)) })
	case e.Name == room.ToolUploadPlanImage:
		input, result := e.Input, e.Result
		s.later(func() { s.reply.AddImages(s.h.uploadedImage(s.document, input, result)) })
	}
}

// later runs f after the work queued before it, off the link's goroutine.
func (s *replySink) later(f func()) {
	prev, done := s.work, make(chan struct{})
	s.work = done
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		f()
	}()
}

// storeToolImages reads an own tool's result and stores each image block
// it can host; a block it could not store is refused as not stored.
func (h *Host) storeToolImages(documentID string, result json.RawMessage) []room.ToolImage {
	content, ok := room.ReadToolResult(result, h.maxStoredImageBytes)
	if !ok {
		return nil
	}
	for i := range content.Images {
		ti := &content.Images[i]
		if ti.Refused != nil {
			continue
		}
		if err := h.store.SaveImage(context.Background(), documentID, ti.Image); err != nil {
			h.log.Error("store a tool's image", "channel", documentID, "err", err)
			ti.NotStored()
		}
	}
	return content.Images
}

// uploadedImage is the image a successful upload_plan_image call stored,
// with its alt, to show on the turn's message.
func (h *Host) uploadedImage(documentID string, input, result json.RawMessage) []room.ToolImage {
	var out room.UploadImageResult
	var args room.UploadImageArgs
	if json.Unmarshal(result, &out) != nil || json.Unmarshal(input, &args) != nil {
		return nil
	}
	sha, _, _ := strings.Cut(strings.TrimPrefix(out.Path, "/images/"), ".")
	img, err := h.store.Image(context.Background(), documentID, sha)
	if err != nil {
		h.log.Error("read an uploaded image", "channel", documentID, "err", err)
		return nil
	}
	alt := args.Alt
	return []room.ToolImage{{Alt: &alt, Image: picture.Image{SHA256: img.SHA256, Ext: img.Ext,
		MimeType: img.MimeType, Width: img.Width, Height: img.Height}}}
}

// uploadPlanImage is the upload_plan_image host tool: it stores an image
// the Planner made in this document's own images and returns the Markdown
// that shows it. Decoding and shrinking run here, in the call's own
// goroutine, outside the room's lock.
func (h *Host) uploadPlanImage(ctx context.Context, ch room.Channel, input json.RawMessage) (any, error) {
	if ch.Archived() {
		return nil, &room.Error{Code: room.CodeDocumentArchived,
			Message: "This document is archived, so it is read-only. Restore it to change it."}
	}
	var args room.UploadImageArgs
	dec := json.NewDecoder(strings.NewReader(string(input)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return nil, &room.Error{Code: room.CodeInvalidArgument,
			Message: `upload_plan_image takes {"data": "<base64>", "mimeType": "image/png", "alt": "what it shows"}.`}
	}
	img, err := room.PrepareUpload(args, h.maxStoredImageBytes)
	if err != nil {
		return nil, err
	}
	if err := h.store.SaveImage(ctx, ch.ID, img); err != nil {
		return nil, err
	}
	return room.UploadResult(img, args.Alt), nil
}
