package mcpserver

// The tools that read and write a document's content: read_document pages
// the plan exactly as the Planner's read_plan does (room.ReadPlan);
// create_document and update_document write it under an idempotency key;
// invoke_planner posts into Chat; upload_image stores an image; and the
// document locator all of them take.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/room"
)

// MaxLocator bounds a document locator, in bytes.
const MaxLocator = 2048

// locate finds the document a locator names: its ID, its path
// /documents/owner/repository/slug (a former slug too), or that path as a
// URL on this instance's origin.
func (s *Server) locate(ctx context.Context, locator string) (Document, error) {
	switch {
	case strings.TrimSpace(locator) == "":
		return Document{}, invalidParams("Invalid arguments: id must name a document; it is blank.")
	case len(locator) > MaxLocator:
		return Document{}, invalidParams("Invalid arguments: id holds at most %d characters.", MaxLocator)
	}
	loc := strings.TrimSpace(locator)
	if isUUID(strings.ToLower(loc)) {
		return s.catalog.Document(ctx, strings.ToLower(loc))
	}
	if strings.Contains(loc, "://") {
		u, err := url.Parse(loc)
		if err != nil || u.Scheme+"://"+u.Host != s.opt.Origin {
			return Document{}, unavailable(locator, "a URL names a document only on this Chopin, "+s.opt.Origin)
		}
		loc = u.EscapedPath()
	}
	loc, _, _ = strings.Cut(loc, "?")
	loc, _, _ = strings.Cut(loc, "#")
	parts := strings.Split(strings.TrimSuffix(loc, "/"), "/")
	if len(parts) == 7 && parts[5] == "children" {
		// A child document's path names its parent too; its own slug is
		// unique in the repository.
		parts = append(parts[:4], parts[6])
	}
	if len(parts) != 5 || parts[0] != "" || parts[1] != "documents" {
		return Document{}, unavailable(locator, "name it by its id, its path /documents/owner/repository/slug, or its URL")
	}
	var seg [3]string
	for i, p := range parts[2:] {
		v, err := url.PathUnescape(p)
		if err != nil || v == "" {
			return Document{}, unavailable(locator, "its path has an empty or malformed part")
		}
		seg[i] = v
	}
	return s.catalog.DocumentAt(ctx, seg[0], seg[1], seg[2])
}

// locateActive finds the document a locator names, as locate does, and
// refuses it if it is archived: what a tool that changes it needs first.
func (s *Server) locateActive(ctx context.Context, locator string) (Document, error) {
	d, err := s.locate(ctx, locator)
	if err == nil && d.ArchivedAt != "" {
		return Document{}, archived(d)
	}
	return d, err
}

func unavailable(locator, why string) *Refusal {
	if len(locator) > 200 {
		locator = locator[:200] + "…"
	}
	return refuse(CodeDocumentUnavailable, "No document is at %q: %s.", locator, why)
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// documentRead is read_document's structuredContent: the document, and the
// page itself, since a client that passes structuredContent on (Claude
// Code, Codex) gives its model nothing else.
type documentRead struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	URL         string    `json:"url"`
	Revision    int64     `json:"revision"`
	Size        int       `json:"size"` // bytes
	ArchivedAt  string    `json:"archivedAt,omitempty"`
	Description *string   `json:"description,omitempty"`
	Brief       string    `json:"brief,omitempty"`
	Text        string    `json:"text"` // the page, as the text block shows it after pagePreamble
	Next        *readNext `json:"next"` // the call that continues; nil at the end
}

// readNext is the read_document call that continues a page, as its next:
// line names it.
type readNext struct {
	ID      string `json:"id"`
	Version *int64 `json:"version,omitempty"` // reading an earlier version
	room.ReadPlanArgs
}

// readOutput is read_document's outputSchema properties.
const readOutput = `"id":{"type":"string"},"title":{"type":"string"},"url":{"type":"string"},` +
	`"revision":{"type":"integer"},"size":{"type":"integer"},"archivedAt":{"type":"string"},` +
	`"description":{"type":"string"},"brief":{"type":"string"},` +
	`"text":{"type":"string","description":"The page: its header, the outline, then text: and the plan's own lines."},` +
	`"next":{"type":["object","null"],"description":"The read_document arguments that continue, or null at the end."}`

func (s *Server) readDocumentTool() tool {
	return tool{
		spec: &mcp.Tool{Name: "read_document", Title: "Read a document",
			Description: "Read a document's plan as text you can page through, archived documents included. The text starts with a header " +
				"(document, url, revision, size, shown, and next: naming the exact read_document call that continues, or none at the end), " +
				"the outline of the top-level blocks the page shows (index, type, lines, digest), then text: and the plan's own lines, verbatim. " +
				"One result holds at most 16,000 bytes; call each next: in turn to read every character exactly once. " +
				"offset is a 1-based line, limit the most lines, column a 1-based character in line offset (to continue a very long line). " +
				"Before the header, the first page has the document's description: and brief: when it has them, and each page of an archived document archived:. " +
				"structuredContent is {id, title, url, revision, size, archivedAt?, description?, brief?, text, next}: text is the page from its header on, " +
				"next the read_document arguments that continue (null at the end); pass revision to update_document. " +
				"version reads the plan as it was at that version (list_versions lists them): revision is then that version, and the text starts with a version: line. " +
				"Refusals: document-unavailable, invalid-argument (an offset or column past the end), version-not-found (a version the history does not keep; the message names the nearest kept ones)."},
		required: []string{"id"},
		props: idProp + `,"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1},"column":{"type":"integer","minimum":1},` +
			`"version":{"type":"integer","minimum":0,"description":"Read the plan as it was at this version (list_versions)."}`,
		outRequired: []string{"id", "title", "url", "revision", "size", "text", "next"},
		outProps:    readOutput,
		run:         typed(s.readDocument),
	}
}

// readArgs are read_document's arguments.
type readArgs = struct {
	ID      *string `json:"id"`
	Offset  *int    `json:"offset"`
	Limit   *int    `json:"limit"`
	Column  *int    `json:"column"`
	Version *int64  `json:"version"`
}

func (s *Server) readDocument(ctx context.Context, c call, args readArgs) (any, error) {
	var paging room.ReadPlanArgs
	for _, p := range []struct {
		name string
		v    *int
		to   *int
	}{{"offset", args.Offset, &paging.Offset}, {"limit", args.Limit, &paging.Limit}, {"column", args.Column, &paging.Column}} {
		if p.v == nil {
			continue
		}
		if *p.v < 1 {
			return nil, invalidParams("Invalid arguments: %s must be a whole number, at least 1.", p.name)
		}
		*p.to = *p.v
	}
	d, err := s.locate(ctx, *args.ID)
	if err != nil {
		return nil, err
	}
	view, err := s.plans.View(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	current := view.Revision
	if args.Version != nil {
		if s.history == nil {
			return nil, refuse(CodeInternal, "This Chopin keeps no history of its plans.")
		}
		if view, err = s.versionView(ctx, d.ID, *args.Version); err != nil {
			return nil, err
		}
	}
	view.Reader = room.Reader{Tool: "read_document", ID: d.ID}
	if args.Version != nil {
		view.Reader.Args = `"version":` + strconv.FormatInt(*args.Version, 10) + `,`
	}
	page, err := room.ReadPlan(view, paging)
	if err != nil {
		return nil, err
	}
	brief, err := s.plans.Brief(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	read := documentRead{ID: d.ID, Title: d.Title, URL: s.summary(d).URL, Revision: view.Revision, Size: len(view.Source),
		ArchivedAt: d.ArchivedAt, Description: d.Description, Brief: brief}
	read.Text = page.Text()
	if page.Next != nil {
		read.Next = &readNext{ID: d.ID, Version: args.Version, ReadPlanArgs: *page.Next}
	}
	text := pagePreamble(read, paging) + read.Text
	if args.Version != nil {
		line := versionLine(*args.Version, current)
		read.Text, text = line+read.Text, line+text
	}
	return pageResult{text: text, structured: read}, nil
}

// pagePreamble is what the text block says of the document before the
// page, for the clients that show their model the text block alone (the
// others read these as structuredContent's fields): archived: on every page
// of an archived document, and description: and brief: on the page that
// starts the plan, each quoted as a JSON string.
func pagePreamble(d documentRead, paging room.ReadPlanArgs) string {
	var b strings.Builder
	if d.ArchivedAt != "" {
		b.WriteString("archived: " + d.ArchivedAt + " (read-only until restore_document)\n")
	}
	if paging.Offset > 1 || paging.Column > 1 {
		return b.String()
	}
	if d.Description != nil && *d.Description != "" {
		b.WriteString("description: " + quote(*d.Description) + "\n")
	}
	if d.Brief != "" {
		b.WriteString("brief: " + quote(d.Brief) + "\n")
	}
	return b.String()
}

// quote is s as a JSON string, with <, > and & as they are.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// writeOutput is create_document's and update_document's outputSchema
// properties: the summary, the revision made and whether it was a replay.
const writeOutput = summaryProps + `,"revision":{"type":"integer"},"replayed":{"type":"boolean"}`

// Bounds of create_document and update_document.
const (
	MaxIdempotencyKey = 128      // bytes
	MaxBrief          = 16 << 10 // bytes
)

// checkKey checks an idempotency key.
func checkKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKey {
		return invalidParams("Invalid arguments: idempotencyKey must be 1 to %d characters.", MaxIdempotencyKey)
	}
	return nil
}

// checkPlan checks a whole plan as the document model takes it; with
// reserved, that it has no Decision line the plan before it did not.
func checkPlan(before, plan string, reserved bool) (string, error) {
	plan = room.NormalizeLineEndings(plan)
	if len(plan) > room.MaxSourceBytes {
		return "", refuse(CodeTooLarge, "The plan is %d bytes; a plan holds at most %d bytes. Shorten it and send it again.", len(plan), room.MaxSourceBytes)
	}
	if strings.TrimSpace(plan) == "" {
		return "", refuse(room.CodeEmptyDocument, "The plan is empty; a plan needs some text.")
	}
	if !reserved {
		return plan, nil
	}
	if err := room.CheckReserved(before, plan); err != nil {
		return "", err
	}
	return plan, nil
}

func (s *Server) createDocumentTool() tool {
	type createArgs = struct {
		Key        *string `json:"idempotencyKey"`
		Repository *string `json:"repository"`
		Title      *string `json:"title"`
		Plan       *string `json:"plan"`
		Brief      string  `json:"brief"`
	}
	return tool{
		spec: &mcp.Tool{Name: "create_document", Title: "Create a document",
			Description: "Create a document in a registered repository with a title and its whole plan (Markdown; Chopin alone writes <Decision id=\"...\" /> lines, so a plan must have none). " +
				"brief is optional context kept with it. Calling again with the same idempotencyKey and the same repository, title, plan and brief returns the same document with replayed: true; " +
				"the same key with anything else is refused. Returns {id, title, url, repository, revision: 0, replayed}. " +
				"Refusals: repository-not-found, title-taken, invalid-title, idempotency-conflict, protected-projection, empty-document, too-large."},
		required: []string{"idempotencyKey", "repository", "title", "plan"},
		props: `"idempotencyKey":{"type":"string","minLength":1,"maxLength":128,"description":"Any string unique to this creation; repeat it to retry safely."},` +
			`"repository":{"type":"string","description":"owner/name, as list_repositories names it."},` +
			`"title":{"type":"string","minLength":1,"maxLength":480},"plan":{"type":"string","description":"The whole plan, Markdown."},` +
			`"brief":{"type":"string","maxLength":16384}`,
		outRequired: append(summaryRequired[:4:4], "revision", "replayed"),
		outProps:    writeOutput,
		line:        "create a document with its plan (idempotent by idempotencyKey)",
		mutates:     true,
		run: typed(func(ctx context.Context, c call, args createArgs) (any, error) {
			if err := checkKey(*args.Key); err != nil {
				return nil, err
			}
			if len(args.Brief) > MaxBrief {
				return nil, invalidParams("Invalid arguments: brief holds at most %d bytes.", MaxBrief)
			}
			plan, err := checkPlan("", *args.Plan, true)
			if err != nil {
				return nil, err
			}
			d, replayed, err := s.catalog.Create(ctx, Creation{Key: *args.Key, Repository: *args.Repository, Title: *args.Title, Plan: plan, Brief: args.Brief})
			if err != nil {
				return nil, err
			}
			return struct {
				Document
				Revision int64 `json:"revision"`
				Replayed bool  `json:"replayed"`
			}{s.summary(d), 0, replayed}, nil
		}),
	}
}

func (s *Server) updateDocumentTool() tool {
	return tool{
		spec: &mcp.Tool{Name: "update_document", Title: "Replace a document's plan",
			Description: "Replace a document's whole plan. revision is the one you last read (read_document's structuredContent or header): " +
				"if the plan has changed since, nothing is written and the refusal revision-conflict carries currentRevision; read it again and redo the change. " +
				"Keep every <Decision id=\"...\" /> line exactly as it is and where it is: dropping, altering or adding one is protected-projection. " +
				"Open editors receive the change live. Calling again with the same idempotencyKey, revision and plan returns the first answer with replayed: true; " +
				"the same key with anything else is idempotency-conflict. Returns {id, title, url, repository, revision, replayed}. " +
				"Refusals: document-unavailable, document-archived, revision-conflict, protected-projection, idempotency-conflict, empty-document, too-large."},
		required: []string{"id", "revision", "plan", "idempotencyKey"},
		props: idProp + `,"revision":{"type":"integer","minimum":0},"plan":{"type":"string","description":"The whole new plan, Markdown."},` +
			`"idempotencyKey":{"type":"string","minLength":1,"maxLength":128}`,
		outRequired: append(summaryRequired[:4:4], "revision", "replayed"),
		outProps:    writeOutput,
		line:        "replace a document's whole plan at the revision you read (idempotent by idempotencyKey)",
		mutates:     true,
		run:         typed(s.updateDocument),
	}
}

// updateArgs are update_document's arguments.
type updateArgs = struct {
	ID       *string `json:"id"`
	Revision *int64  `json:"revision"`
	Plan     *string `json:"plan"`
	Key      *string `json:"idempotencyKey"`
}

func (s *Server) updateDocument(ctx context.Context, c call, args updateArgs) (any, error) {
	if err := checkKey(*args.Key); err != nil {
		return nil, err
	}
	if *args.Revision < 0 {
		return nil, invalidParams("Invalid arguments: revision is a whole number, at least 0.")
	}
	d, err := s.locate(ctx, *args.ID)
	if err != nil {
		return nil, err
	}
	type answer struct {
		Document
		Revision int64 `json:"revision"`
		Replayed bool  `json:"replayed"`
	}
	plan := room.NormalizeLineEndings(*args.Plan)
	hash := updateHash(*args.Revision, plan)
	s.updates.Lock()
	defer s.updates.Unlock()
	if was, revision, found, err := s.plans.UpdateReplay(ctx, d.ID, *args.Key); err != nil {
		return nil, err
	} else if found {
		if was != hash {
			return nil, refuse(CodeIdempotencyConflict, "This idempotencyKey already updated this document with a different revision or plan. Use a new key for a new change.")
		}
		return answer{s.summary(d), revision, true}, nil
	}
	if d.ArchivedAt != "" {
		return nil, archived(d)
	}
	// The room checks the revision and the Decision lines as it applies
	// the change, under its lock.
	if plan, err = checkPlan("", plan, false); err != nil {
		return nil, err
	}
	revision, err := s.plans.Replace(ctx, d.ID, *args.Revision, plan, c.client)
	var re *room.Error
	if errors.As(err, &re) && re.Code == room.CodeStaleRevision {
		return nil, revisionConflict(*args.Revision, revision)
	}
	if err != nil {
		return nil, err
	}
	if err := s.plans.RecordUpdate(ctx, d.ID, *args.Key, hash, revision); err != nil {
		return nil, err
	}
	return answer{s.summary(d), revision, false}, nil
}

func revisionConflict(given, current int64) *Refusal {
	rf := refuse(CodeRevisionConflict, "The plan is at revision %d, not %d: it changed since you read it. Read it again with read_document and redo your change on the current text.", current, given)
	rf.Extra = map[string]any{"currentRevision": current}
	return rf
}

// updateHash fingerprints an update_document call for its replay record.
func updateHash(revision int64, plan string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s", revision, plan)
	return hex.EncodeToString(h.Sum(nil))
}

// MaxInstruction bounds invoke_planner's instruction, in bytes of UTF-8.
const MaxInstruction = 64 << 10

// MaxReferences is the most documents an instruction refers to.
const MaxReferences = room.MaxReferences

func (s *Server) invokePlannerTool() tool {
	type invokeArgs = struct {
		ID          *string           `json:"id"`
		Instruction *string           `json:"instruction"`
		As          *string           `json:"as"`
		References  []json.RawMessage `json:"references"`
	}
	return tool{
		spec: &mcp.Tool{Name: "invoke_planner", Title: "Ask the Planner",
			Description: "Post an instruction to a document's Chat and start a Planner turn with it. It is posted under your name, or, with as: \"system\", " +
				"as a system follow-up (for an automatic follow-up such as a finished run). references names other documents the instruction refers to (as id does), " +
				"or a passage of one as {id, from, to, revision?} (UTF-16 offsets into its plan at revision, its revision now when left out); " +
				"the Planner reads them with its read_reference tool and is told whether each changed since, and where each passage is now. Returns {id, messageId} once it is posted, not when the Planner has answered: " +
				"read the document or its Chat later for the result. Without an attached Planner nothing is posted and the call is refused. " +
				"Refusals: document-unavailable, document-archived, planner-not-attached, planner-busy."},
		required: []string{"id", "instruction"},
		props: idProp + `,"instruction":{"type":"string","minLength":1,"maxLength":65536,"description":"What the Planner should do, kept verbatim."},` +
			`"as":{"type":"string","enum":["system"]},` +
			`"references":{"type":"array","maxItems":10,"items":{"oneOf":[{"type":"string","minLength":1},` +
			`{"type":"object","required":["id","from","to"],"properties":{"id":{"type":"string","minLength":1},"from":{"type":"integer","minimum":0},"to":{"type":"integer","minimum":1},"revision":{"type":"integer","minimum":0}},"additionalProperties":false}]},` +
			`"description":"Other documents the instruction refers to, each as id names a document, or a passage of one: {id, from, to, revision?}."}`,
		outRequired: []string{"id", "messageId"},
		outProps:    `"id":{"type":"string"},"messageId":{"type":"string"}`,
		line:        "post an instruction to a document's Chat and start a Planner turn",
		mutates:     true,
		run: typed(func(ctx context.Context, c call, args invokeArgs) (any, error) {
			switch {
			case strings.TrimSpace(*args.Instruction) == "":
				return nil, invalidParams("Invalid arguments: instruction is blank.")
			case len(*args.Instruction) > MaxInstruction:
				return nil, invalidParams("Invalid arguments: instruction holds at most %d bytes of UTF-8; it has %d.", MaxInstruction, len(*args.Instruction))
			case !utf8.ValidString(*args.Instruction):
				return nil, invalidParams("Invalid arguments: instruction must be UTF-8 text.")
			case args.As != nil && *args.As != "system":
				return nil, invalidParams(`Invalid arguments: as is "system" or absent.`)
			}
			d, err := s.locateActive(ctx, *args.ID)
			if err != nil {
				return nil, err
			}
			if len(args.References) > MaxReferences {
				return nil, invalidParams("Invalid arguments: references names at most %d documents; it names %d.", MaxReferences, len(args.References))
			}
			refs := make([]room.ReferenceRequest, len(args.References))
			for i, raw := range args.References {
				if refs[i], err = s.reference(ctx, raw); err != nil {
					return nil, err
				}
			}
			author := c.client
			if args.As != nil {
				author = ""
			}
			id, err := s.chat.Invoke(ctx, d.ID, author, *args.Instruction, refs)
			if err != nil {
				return nil, err
			}
			return map[string]string{"id": d.ID, "messageId": id}, nil
		}),
	}
}

// reference is one of invoke_planner's references: a document's locator,
// or a passage of one as {id, from, to, revision?}.
func (s *Server) reference(ctx context.Context, raw json.RawMessage) (room.ReferenceRequest, error) {
	var locator string
	if json.Unmarshal(raw, &locator) == nil {
		d, err := s.locate(ctx, locator)
		if err != nil {
			return room.ReferenceRequest{}, err
		}
		return room.ReferenceRequest{Kind: room.ReferenceDocument, ChannelID: d.ID}, nil
	}
	var p struct {
		ID       string `json:"id"`
		From     *int   `json:"from"`
		To       *int   `json:"to"`
		Revision *int64 `json:"revision"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.ID == "" || p.From == nil || p.To == nil {
		return room.ReferenceRequest{}, invalidParams(`Invalid arguments: each reference is a document's id, or a passage of one as {"id", "from", "to", "revision"?}.`)
	}
	d, err := s.locate(ctx, p.ID)
	if err != nil {
		return room.ReferenceRequest{}, err
	}
	return room.ReferenceRequest{Kind: room.ReferencePassage, ChannelID: d.ID, From: p.From, To: p.To, Revision: p.Revision}, nil
}

// MaxImageBytes bounds upload_image's decoded bytes.
const MaxImageBytes = 1 << 20

// imageTypes are the types upload_image takes.
var imageTypes = map[string]*picture.Type{
	"image/png": picture.PNG, "image/jpeg": picture.JPEG, "image/webp": picture.WebP, "image/gif": picture.GIF,
}

func (s *Server) uploadImageTool() tool {
	type uploadArgs = struct {
		ID       *string `json:"id"`
		Data     *string `json:"data"`
		MimeType *string `json:"mimeType"`
	}
	return tool{
		spec: &mcp.Tool{Name: "upload_image", Title: "Upload an image",
			Description: "Store an image (PNG, JPEG, WebP or GIF, at most 1 MiB) as one of a document's own images and get the Markdown that shows it in the plan. " +
				"data is the bytes in standard base64. The same bytes give the same path. Returns {path: \"/images/<sha256>.<ext>\", markdown}; " +
				"replace \"image\" in the markdown's brackets with words saying what it shows before you put it in the plan. " +
				"Refusals: document-unavailable, document-archived, unsupported-type (SVG included), signature-mismatch (the bytes are not mimeType), too-large, invalid-data (not base64)."},
		required: []string{"id", "data", "mimeType"},
		props: idProp + `,"data":{"type":"string","description":"The image's bytes in standard base64."},` +
			`"mimeType":{"type":"string","description":"image/png, image/jpeg, image/webp or image/gif."}`,
		outRequired: []string{"path", "markdown"},
		outProps:    `"path":{"type":"string"},"markdown":{"type":"string"}`,
		line:        "store an image in a document and get its Markdown",
		mutates:     true,
		run: typed(func(ctx context.Context, c call, args uploadArgs) (any, error) {
			d, err := s.locateActive(ctx, *args.ID)
			if err != nil {
				return nil, err
			}
			img, err := readImage(*args.Data, *args.MimeType)
			if err != nil {
				return nil, err
			}
			if err := s.images.SaveImage(ctx, d.ID, img); err != nil {
				return nil, err
			}
			path := "/images/" + img.SHA256 + "." + img.Ext
			return map[string]string{"path": path, "markdown": "![image](" + path + ")"}, nil
		}),
	}
}

// readImage checks upload_image's bytes: the type, the size (on the base64
// length first, so an oversized upload is never decoded) and the bytes'
// signature.
func readImage(data, mimeType string) (picture.Image, error) {
	t := imageTypes[mimeType]
	if t == nil {
		shown := mimeType
		if len(shown) > 100 {
			shown = shown[:100]
		}
		return picture.Image{}, refuse(CodeUnsupportedType, "mimeType %s is not one Chopin stores: send a PNG, JPEG, WebP or GIF (image/png, image/jpeg, image/webp, image/gif).", strconv.Quote(shown))
	}
	if base64.StdEncoding.DecodedLen(len(data)) > MaxImageBytes+2 {
		return picture.Image{}, refuse(CodeTooLarge, "The image is over 1 MiB (%d bytes), the most upload_image takes. Make it smaller and upload it again.", MaxImageBytes)
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) == 0 {
		return picture.Image{}, refuse(CodeInvalidData, "data must be the image's bytes in standard base64 (with + and /, padded with =).")
	}
	if len(raw) > MaxImageBytes {
		return picture.Image{}, refuse(CodeTooLarge, "The image is %d bytes, over 1 MiB (%d bytes), the most upload_image takes. Make it smaller and upload it again.", len(raw), MaxImageBytes)
	}
	w, h, err := picture.Measure(t, raw)
	if err != nil {
		return picture.Image{}, refuse(CodeSignatureMismatch, "The bytes are not %s: %s. Send the bytes with the type they are.", t.MimeType(), strings.TrimPrefix(err.Error(), "its "))
	}
	img, err := picture.Fit(t, raw, w, h, MaxImageBytes)
	var tmp *picture.TooManyPixelsError
	if errors.As(err, &tmp) {
		return picture.Image{}, refuse(CodeTooLarge, "The image is %d × %d pixels, more than Chopin can make smaller. Make it smaller and upload it again.", w, h)
	}
	return img, err
}
