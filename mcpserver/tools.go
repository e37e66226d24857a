package mcpserver

// The tools, each with its description (the contract a client's model
// reads), its input schema and its handler. Arguments are strict: a missing
// required key, a wrong type, an unknown key, or text that is not UTF-8 is
// -32602, checked here for every tool by typed, since the SDK leaves a raw
// handler's arguments to it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/textrule"
)

// Repository is a registered repository as list_repositories shows it.
type Repository struct {
	Name string `json:"name"` // owner/name
	Path string `json:"path,omitempty"`
}

// Document is the common summary of a document.
type Document struct {
	ID          string  `json:"id"`
	Title       string  `json:"title"`
	URL         string  `json:"url"` // absolute on the instance's origin in results; app gives the path
	Repository  string  `json:"repository"`
	ArchivedAt  string  `json:"archivedAt,omitempty"`
	Description *string `json:"description,omitempty"`
}

// ListQuery is a list_documents call.
type ListQuery struct {
	Repository      string // owner/name
	Query, Cursor   string
	IncludeArchived bool
}

// Listing is a page of documents, NextCursor "" on the last.
type Listing struct {
	Documents  []Document
	NextCursor string
}

// Creation is a create_document call, the plan checked.
type Creation struct {
	Key, Repository, Title, Plan, Brief string
}

// call is one tool call as a handler sees it.
type call struct {
	args     json.RawMessage
	required []string // the arguments the tool's input schema requires
	client   string   // the client's clientInfo.name, or "MCP client"
}

// tool is a tool's spec with its handler.
type tool struct {
	spec *mcp.Tool
	// required and props make spec's input schema: the arguments a call
	// must give, and every argument's JSON Schema.
	required []string
	props    string
	// outRequired and outProps make spec's output schema the same way: a
	// success's keys and every key's JSON Schema (outputSchema).
	outRequired []string
	outProps    string
	line        string // the one-line description initialize's instructions list
	mutates     bool
	run         func(ctx context.Context, c call) (any, error) // made by typed
	handler     mcp.ToolHandler
}

// typed makes a tool's run from a function of its arguments, as the SDK's
// mcp.AddTool does for a typed handler, but with this package's strict
// decoding and -32602 texts: the call's arguments are decoded into In, a
// struct whose required fields are pointers, before run sees them. In is
// an unnamed struct type (the tools declare it with an alias), since the
// decoder's messages name it.
func typed[In any](run func(ctx context.Context, c call, args In) (any, error)) func(ctx context.Context, c call) (any, error) {
	return func(ctx context.Context, c call) (any, error) {
		var args In
		if err := textrule.JSON(c.args); err != nil {
			// Decoding would replace the bad bytes with U+FFFD.
			return nil, invalidParams("Invalid arguments: the arguments %v; send text in UTF-8.", err)
		}
		if err := decodeArgs(c.args, &args, c.required...); err != nil {
			return nil, err
		}
		return run(ctx, c, args)
	}
}

func (s *Server) tools() []tool {
	ts := []tool{
		s.listRepositoriesTool(), s.listDocumentsTool(), s.readDocumentTool(), s.listVersionsTool(),
		s.createDocumentTool(), s.updateDocumentTool(),
		s.renameDocumentTool(), s.archiveDocumentTool(), s.restoreDocumentTool(),
		s.invokePlannerTool(), s.uploadImageTool(),
	}
	for i := range ts {
		t := &ts[i]
		t.spec.InputSchema = schema(t.required, t.props)
		t.spec.OutputSchema = outputSchema(t.outRequired, t.outProps)
		t.spec.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: !t.mutates, IdempotentHint: t.mutates && t.spec.Name != "invoke_planner"}
		if t.mutates {
			f := false
			t.spec.Annotations.DestructiveHint = &f
		}
		run, name, required := t.run, t.spec.Name, t.required
		t.handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			out, err := run(ctx, call{args: req.Params.Arguments, required: required, client: clientName(req)})
			return s.result(ctx, name, out, err)
		}
	}
	return ts
}

// toolLines are the mutating tools and their one-line descriptions.
var toolLines = func() string {
	var b strings.Builder
	for _, t := range (&Server{}).tools() {
		if t.mutates {
			fmt.Fprintf(&b, "- %s: %s\n", t.spec.Name, t.line)
		}
	}
	return b.String()
}()

// instructions are initialize's: what Chopin is, and each tool that
// changes something.
func instructions() string {
	return "Chopin holds plans (implementation plans, specs, RFCs) that people write with an AI Planner: each document " +
		"belongs to a registered repository and has a Plan (Markdown with a few MDX components), a Chat and Decisions. " +
		"Find documents with list_repositories and list_documents, read one with read_document (follow its next: line to page " +
		"through a large plan), and name a document by its id, its /documents/owner/repository/slug path or its URL.\n\n" +
		"The tools that change something:\n" + toolLines +
		"\nEach tool's description is the contract: its arguments, its result and the codes it refuses with. A refusal is a " +
		"result with isError and structuredContent {code, message}; read the message, it says what to do."
}

// clientName is who the call comes from, as Chat and the plan show it.
func clientName(req *mcp.CallToolRequest) string {
	name := ""
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			name = p.ClientInfo.Name
		}
	}
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, name))
	if utf8.RuneCountInString(name) > 64 {
		name = string([]rune(name)[:64])
	}
	if name == "" {
		return "MCP client"
	}
	return name
}

// decodeArgs decodes a call's arguments strictly into v, a pointer to a
// struct whose required fields are pointers; required names them.
func decodeArgs(raw json.RawMessage, v any, required ...string) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidParams("Invalid arguments: %s.", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return invalidParams("Invalid arguments: unexpected data after the arguments object.")
	}
	var present map[string]json.RawMessage
	json.Unmarshal(raw, &present) // decoded above, so an object
	for _, name := range required {
		if p, ok := present[name]; !ok || string(p) == "null" {
			return invalidParams("Invalid arguments: %q is required.", name)
		}
	}
	return nil
}

// schema is an input schema: an object with exactly these properties.
func schema(required []string, props string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

// outputSchema is an output schema: an object that is a success, with the
// keys required, or a refusal, {code, message, currentRevision?}. A client
// built on the TypeScript SDK checks every structuredContent against it,
// refusals included, so it admits both; it leaves other keys open, so that
// a later Chopin may add one.
func outputSchema(required []string, props string) json.RawMessage {
	req, _ := json.Marshal(required)
	return json.RawMessage(`{"type":"object","properties":{` + props + `,` + refusalProps + `},` +
		`"anyOf":[{"required":` + string(req) + `},{"required":["code","message"]}]}`)
}

// refusalProps are a refusal's keys (results.go).
const refusalProps = `"code":{"type":"string","description":"A refusal's code."},` +
	`"message":{"type":"string","description":"A refusal's message: what happened and what to do."},` +
	`"currentRevision":{"type":"integer","description":"revision-conflict's: the plan's revision now."}`

// summaryProps are a document summary's keys (Document); summaryRequired
// those it always has.
const summaryProps = `"id":{"type":"string"},"title":{"type":"string"},"url":{"type":"string"},"repository":{"type":"string"},` +
	`"archivedAt":{"type":"string"},"description":{"type":"string"}`

var summaryRequired = []string{"id", "title", "url", "repository"}

const idProp = `"id":{"type":"string","minLength":1,"maxLength":2048,"description":"The document: its id (a UUID), its path /documents/owner/repository/slug (a former slug works too), or its URL."}`

func (s *Server) listRepositoriesTool() tool {
	return tool{
		spec: &mcp.Tool{Name: "list_repositories", Title: "List repositories",
			Description: "List the repositories registered in Chopin, each with the path of its local checkout when one is registered. " +
				"Takes no arguments. Returns {repositories: [{name: \"owner/name\", path?}]}."},
		outRequired: []string{"repositories"},
		outProps:    `"repositories":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"path":{"type":"string"}},"required":["name"]}}`,
		run: typed(func(ctx context.Context, c call, args struct{}) (any, error) {
			repos, err := s.catalog.Repositories(ctx)
			if repos == nil {
				repos = []Repository{}
			}
			return map[string]any{"repositories": repos}, err
		}),
	}
}

func (s *Server) listDocumentsTool() tool {
	type listArgs = struct {
		Repository      *string `json:"repository"`
		IncludeArchived bool    `json:"includeArchived"`
		Query           string  `json:"query"`
		Cursor          string  `json:"cursor"`
	}
	return tool{
		spec: &mcp.Tool{Name: "list_documents", Title: "List documents",
			Description: "List a repository's documents, most recently updated first, 50 at a time. Archived documents are left out unless includeArchived is true; " +
				"query matches titles and descriptions. Pass a result's nextCursor as cursor, with the same query and includeArchived, for the next page. " +
				"Returns {documents: [{id, title, url, repository, archivedAt?, description?}], nextCursor: string or null}. " +
				"Refusals: repository-not-found, invalid-cursor."},
		required: []string{"repository"},
		props: `"repository":{"type":"string","description":"owner/name, as list_repositories names it."},` +
			`"includeArchived":{"type":"boolean"},"query":{"type":"string","maxLength":200},"cursor":{"type":"string","maxLength":1024}`,
		outRequired: []string{"documents", "nextCursor"},
		outProps: `"documents":{"type":"array","items":{"type":"object","properties":{` + summaryProps + `},"required":["id","title","url","repository"]}},` +
			`"nextCursor":{"type":["string","null"]}`,
		run: typed(func(ctx context.Context, c call, args listArgs) (any, error) {
			if len(args.Query) > 800 || len(args.Cursor) > 1024 {
				return nil, invalidParams("Invalid arguments: query holds at most 200 characters and cursor 1024.")
			}
			page, err := s.catalog.Documents(ctx, ListQuery{Repository: *args.Repository, Query: args.Query, Cursor: args.Cursor, IncludeArchived: args.IncludeArchived})
			if err != nil {
				return nil, err
			}
			out := struct {
				Documents  []Document `json:"documents"`
				NextCursor *string    `json:"nextCursor"`
			}{Documents: make([]Document, len(page.Documents))}
			for i, d := range page.Documents {
				out.Documents[i] = s.summary(d)
			}
			if page.NextCursor != "" {
				out.NextCursor = &page.NextCursor
			}
			return out, nil
		}),
	}
}

// summary is a document as results show it: its URL absolute.
func (s *Server) summary(d Document) Document {
	if strings.HasPrefix(d.URL, "/") {
		d.URL = s.opt.Origin + d.URL
	}
	return d
}

func (s *Server) renameDocumentTool() tool {
	type renameArgs = struct {
		ID    *string `json:"id"`
		Title *string `json:"title"`
	}
	return tool{
		spec: &mcp.Tool{Name: "rename_document", Title: "Rename a document",
			Description: "Give a document a new title (1 to 120 characters). Its readable URL follows the new title; the old one keeps working. " +
				"Renaming to the title it has changes nothing. Returns the document's summary. Refusals: document-unavailable, title-taken, invalid-title, document-archived."},
		required:    []string{"id", "title"},
		props:       idProp + `,"title":{"type":"string","minLength":1,"maxLength":480}`,
		outRequired: summaryRequired,
		outProps:    summaryProps,
		line:        "give a document a new title",
		mutates:     true,
		run: typed(func(ctx context.Context, c call, args renameArgs) (any, error) {
			d, err := s.locateActive(ctx, *args.ID)
			if err != nil {
				return nil, err
			}
			d, err = s.catalog.Rename(ctx, d.ID, *args.Title)
			return s.summary(d), err
		}),
	}
}

func (s *Server) archiveDocumentTool() tool {
	return s.lifecycleTool("archive_document", "Archive a document",
		"Archive a document: it leaves the default listing and becomes read-only until restored; nothing is deleted. "+
			"Archiving an archived document changes nothing. Returns the document's summary, with archivedAt. Refusals: document-unavailable.",
		"archive a document (read-only, out of the listing; restore_document undoes it)",
		func(ctx context.Context, id string) (Document, error) { return s.catalog.Archive(ctx, id) })
}

func (s *Server) restoreDocumentTool() tool {
	return s.lifecycleTool("restore_document", "Restore a document",
		"Restore an archived document: it is listed and editable again. Restoring an active document changes nothing. "+
			"Returns the document's summary. Refusals: document-unavailable.",
		"restore an archived document",
		func(ctx context.Context, id string) (Document, error) { return s.catalog.Restore(ctx, id) })
}

func (s *Server) lifecycleTool(name, title, description, line string, transition func(ctx context.Context, id string) (Document, error)) tool {
	type lifecycleArgs = struct {
		ID *string `json:"id"`
	}
	return tool{
		spec:        &mcp.Tool{Name: name, Title: title, Description: description},
		required:    []string{"id"},
		props:       idProp,
		outRequired: summaryRequired,
		outProps:    summaryProps,
		line:        line,
		mutates:     true,
		run: typed(func(ctx context.Context, c call, args lifecycleArgs) (any, error) {
			d, err := s.locate(ctx, *args.ID)
			if err != nil {
				return nil, err
			}
			d, err = transition(ctx, d.ID)
			return s.summary(d), err
		}),
	}
}

// archived is the refusal of a change to an archived document.
func archived(d Document) *Refusal {
	return refuse(CodeDocumentArchived, "%q is archived, so it cannot change. Restore it with restore_document first.", d.Title)
}
