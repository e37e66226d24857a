package plannerhost

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/redact"
	"github.com/chopin-desktop/chopin/room"
)

// References are the documents a document's Chat refers to (`#`
// references, room/references.go), as read_reference needs them.
type References interface {
	// LatestReference is the newest reference the Chat of document from
	// makes to document to; found is false when it makes none.
	LatestReference(ctx context.Context, from, to string) (ref room.Reference, found bool, err error)
	// HasReferences reports whether the Chat of document from refers to
	// any document.
	HasReferences(ctx context.Context, from string) (bool, error)
	// ReferencesTo is the references to document to of the newest message
	// in the Chat of document from that refers to it.
	ReferencesTo(ctx context.Context, from, to string) ([]room.Reference, error)
	// PassageSteps is the history of document id after version after,
	// through version through, as room.LocatePassage maps a passage.
	PassageSteps(ctx context.Context, id string, after, through int64) ([]room.PassageStep, error)
}

// referenceTools is read_reference, offered to a document whose Chat
// refers to another, or nothing.
func (h *Host) referenceTools(ctx context.Context, documentID string) ([]wire.Tool, error) {
	has, err := h.store.HasReferences(ctx, documentID)
	if err != nil || !has {
		return nil, err
	}
	t := room.ReadReferenceTool
	return []wire.Tool{{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}}, nil
}

// readReference reads a page of a document the Chat of document from
// refers to, as read_plan reads this one, masked as the checkout tools'
// results are, after a line that says whether it changed since. Read from
// its start (no offset or column), it shows first the passages of it the
// newest message referring to it points at, each found where it is now.
func (h *Host) readReference(ctx context.Context, from string, input json.RawMessage) (any, error) {
	id, args, err := room.ParseReadReferenceArgs(input)
	if err != nil {
		return nil, err
	}
	ref, found, err := h.store.LatestReference(ctx, from, id)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &wire.ToolError{Code: "reference-not-found", Kind: "ReferenceNotFound",
			Message: "No message of this document's Chat refers to a document with the id " + id + "; read_reference reads only the documents the prompt lists."}
	}
	ch, err := h.docs.Document(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, &wire.ToolError{Code: "document-unavailable", Kind: "DocumentUnavailable",
				Message: "The referenced document “" + ref.Label + "” no longer exists."}
		}
		return nil, err
	}
	r, release, err := h.hub.Acquire(ctx, ch)
	if err != nil {
		return nil, err
	}
	defer release()
	view := r.View()
	view.Reader = room.Reader{Tool: room.ToolReadReference, ID: id}
	view.Threads = nil // the other document's comment threads are its own people's
	page, err := room.ReadPlan(view, args)
	if err != nil {
		return nil, err
	}
	passages := ""
	if args.Offset == 0 && args.Column == 0 {
		if passages, err = h.passages(ctx, from, id, view); err != nil {
			return nil, err
		}
	}
	return redact.Text(room.ReferenceStatus(ref, view) + passages + page.Text()), nil
}

// passages is what read_reference says first of the passages of document
// id that the newest message of from's Chat referring to it points at.
func (h *Host) passages(ctx context.Context, from, id string, view room.PlanView) (string, error) {
	refs, err := h.store.ReferencesTo(ctx, from, id)
	if err != nil {
		return "", err
	}
	var ps []room.Reference
	var located []room.PassageNow
	for _, ref := range refs {
		if ref.Passage == nil {
			continue
		}
		steps, err := h.store.PassageSteps(ctx, id, ref.ObservedRevision, view.Revision)
		if err != nil {
			return "", err
		}
		ps = append(ps, ref)
		located = append(located, room.LocatePassage(*ref.Passage, ref.ObservedRevision, steps, view.Source, view.Revision))
	}
	return room.PassagesReport(ps, located), nil
}
