package room

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// `#` references: a person's message may point at other documents ("compare
// with #Launch plan"). The message keeps each as a Reference in its details,
// with the revision and the digest of the plan it saw when it was sent, so
// the Planner can tell whether the document changed since. A reference
// names the document by its ID: it survives a rename, and Chat shows it
// under the document's current title. The Planner reads a referenced
// document with the read_reference host tool; references never change
// which document the editing tools write.

// ReferenceDocument is the one kind of reference there is.
const ReferenceDocument = "document"

// MaxReferences is the most documents one message refers to.
const MaxReferences = 10

// ReferenceRequest is a reference as a client sends it: the document's ID.
// The label and what was observed are the server's, never the client's.
type ReferenceRequest struct {
	Kind      string `json:"kind"`
	ChannelID string `json:"channelId"`
}

// Reference is a kept reference.
type Reference struct {
	Kind               string `json:"kind"`
	ChannelID          string `json:"channelId"`
	Label              string `json:"label"` // the document's title when the message was sent
	ObservedRevision   int64  `json:"observedRevision"`
	ObservedSourceHash string `json:"observedSourceHash"` // Digest of the plan at that revision
}

// ResolveReferences checks the documents a message refers to, in order,
// once each, and returns them as kept: each one's title, revision and plan
// digest now. A document that does not exist is refused. It reads each
// document's room, so it must be called without any room's lock held.
func (h *Hub) ResolveReferences(ctx context.Context, reqs []ReferenceRequest) ([]Reference, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	if len(reqs) > MaxReferences {
		return nil, errorf(CodeInvalidArgument, "A message refers to at most %d documents; this one refers to %d.", MaxReferences, len(reqs))
	}
	if h.channels == nil {
		return nil, errorf(CodeInvalidArgument, "Chopin cannot look documents up here, so a message cannot refer to one.")
	}
	out := make([]Reference, 0, len(reqs))
	seen := map[string]bool{}
	for _, req := range reqs {
		if req.Kind != ReferenceDocument {
			return nil, errorf(CodeInvalidArgument, "A reference's kind is %q; %q is not one.", ReferenceDocument, req.Kind)
		}
		if seen[req.ChannelID] {
			continue
		}
		seen[req.ChannelID] = true
		ref, err := h.observe(ctx, req.ChannelID)
		if err != nil {
			return nil, err
		}
		out = append(out, ref)
	}
	return out, nil
}

// observe is a reference to the document id as it is now.
func (h *Hub) observe(ctx context.Context, id string) (Reference, error) {
	if strings.TrimSpace(id) == "" {
		return Reference{}, errorf(CodeInvalidArgument, "A reference names its document by channelId.")
	}
	ch, err := h.channels.Channel(ctx, id)
	if err != nil {
		if h.channels.IsNotFound(err) {
			return Reference{}, errorf(CodeNotFound, "No document has the ID %s: it may have been deleted. Pick the document again with #.", id)
		}
		return Reference{}, err
	}
	r, release, err := h.Acquire(ctx, ch)
	if err != nil {
		return Reference{}, err
	}
	defer release()
	v := r.View()
	return Reference{Kind: ReferenceDocument, ChannelID: ch.ID, Label: ch.Title,
		ObservedRevision: v.Revision, ObservedSourceHash: Digest(v.Source)}, nil
}

// MessageReferences returns the documents a message refers to: a person's,
// or an instruction Invoke posted.
func MessageReferences(m Message) []Reference {
	if m.Role == RolePlanner || len(m.Details) == 0 {
		return nil
	}
	var d personDetails
	if json.Unmarshal(m.Details, &d) != nil {
		return nil
	}
	return d.References
}

// Send posts a person's message with its files and the documents it refers
// to: the files checked as ReadAttachments says, the references as
// ResolveReferences does, then sent as Say sends any message.
func (r *Room) Send(ctx context.Context, who Identity, text string, ups []AttachmentUpload, refs []ReferenceRequest) (Message, error) {
	if len(ups) == 0 && len(refs) == 0 {
		return r.Say(ctx, who, text)
	}
	files, err := ReadAttachments(ups, r.hub.attachments)
	if err != nil {
		return Message{}, err
	}
	kept, err := r.hub.ResolveReferences(ctx, refs)
	if err != nil {
		return Message{}, err
	}
	return r.say(ctx, who, text, encode(personDetails{Attachments: files, References: kept}))
}

// ToolReadReference is the host tool that reads a referenced document.
const ToolReadReference = "read_reference"

// ReadReferenceTool is read_reference as a turn offers it: only to a
// document whose Chat refers to another.
var ReadReferenceTool = ToolSpec{
	Name: ToolReadReference,
	Description: "Read another document that a Chat message refers to (people refer to documents with #; the turn's prompt lists them with their ids). " +
		"It pages like read_plan and takes its offset, limit and column, with the referenced document's id. The first line says the revision it was referenced at " +
		"and whether the document changed since. It only reads: edit_plan and ask always write this document, never a referenced one.",
	InputSchema: json.RawMessage(`{"type":"object","required":["id"],"properties":{` +
		`"id":{"type":"string","minLength":1,"description":"The referenced document's id, as the prompt lists it."},` +
		`"offset":{"type":"integer","minimum":1,"description":"The 1-based line to start at; default 1."},` +
		`"limit":{"type":"integer","minimum":1,"description":"The most lines to show."},` +
		`"column":{"type":"integer","minimum":1,"description":"The 1-based character of line offset to start at, to continue a line cut by the previous result."}` +
		`},"additionalProperties":false}`),
}

// ParseReadReferenceArgs decodes read_reference's input strictly: the
// referenced document's id and read_plan's paging arguments.
func ParseReadReferenceArgs(input []byte) (id string, args ReadPlanArgs, err error) {
	var in struct {
		ID string `json:"id"`
		ReadPlanArgs
	}
	if err := decodeStrict(input, &in); err != nil {
		return "", args, errorf(CodeInvalidArgument, "read_reference takes {id, offset?, limit?, column?}: %v.", err)
	}
	if strings.TrimSpace(in.ID) == "" {
		return "", args, errorf(CodeInvalidArgument, "read_reference needs the id of a referenced document; the prompt lists them.")
	}
	return in.ID, in.ReadPlanArgs, nil
}

// ReferenceStatus is the first line of a read_reference result: when the
// document was referenced and whether it changed since.
func ReferenceStatus(ref Reference, now PlanView) string {
	if Digest(now.Source) == ref.ObservedSourceHash {
		return fmt.Sprintf("reference: referenced as “%s” at revision %d; unchanged since.\n", oneLine(ref.Label), ref.ObservedRevision)
	}
	return fmt.Sprintf("reference: referenced as “%s” at revision %d; changed since: it is now at revision %d.\n",
		oneLine(ref.Label), ref.ObservedRevision, now.Revision)
}

// ReferencesPrompt is what a turn's prompt says of the documents its
// message refers to, or "" for none.
func ReferencesPrompt(refs []Reference) string {
	if len(refs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nThe message refers to other documents; read one with read_reference {\"id\": ...}:\n")
	for _, ref := range refs {
		fmt.Fprintf(&b, "- “%s” (id %s), at revision %d when referenced\n", oneLine(ref.Label), ref.ChannelID, ref.ObservedRevision)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
