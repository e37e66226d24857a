package plannerhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/redact"
	"github.com/chopin-desktop/chopin/room"
)

// The plan's history as the Planner reads it (docs/host-tools.md,
// "list_versions" and "read_version"): the versions the document keeps, as
// GET …/versions lists them, and the plan as it was at one, paged like
// read_plan. They only read: edit_plan always edits the plan as it is now.

// History is a document's kept versions, as the app's history has them.
type History interface {
	// Versions are the kept versions, newest first, before the version
	// before (all when 0), at most limit.
	Versions(ctx context.Context, id string, before int64, limit int) ([]room.Version, error)
	// VersionText is the plan's text at a kept version; a version the
	// history does not keep is a *room.Error naming the nearest kept ones.
	VersionText(ctx context.Context, id string, version int64) (string, error)
}

// Host tool names.
const (
	ToolListVersions = "list_versions"
	ToolReadVersion  = "read_version"
)

// versionTools are list_versions and read_version, offered on every turn
// when the Host has the history.
var versionTools = []room.ToolSpec{
	{
		Name: ToolListVersions,
		Description: "List the versions of this plan that Chopin keeps, " + room.VersionsListed +
			" Pass next as before for the next page; read one with read_version. Returns {versions: [...], next?: version}.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"before":{"type":"integer","minimum":1,"description":"List the versions before this one (a page's next)."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":200,"description":"The most versions to list; default 50."}` +
			`},"additionalProperties":false}`),
	},
	{
		Name: ToolReadVersion,
		Description: "Read this plan as it was at an earlier version (list_versions lists them). It pages like read_plan and takes its offset, limit and column, with the version. " +
			"The first line says which version it is, who made it and when, and the revision the plan is at now. It only reads: edit_plan always edits the plan as it is now, so read_plan before editing.",
		InputSchema: json.RawMessage(`{"type":"object","required":["version"],"properties":{` +
			`"version":{"type":"integer","minimum":0,"description":"The version to read, as list_versions lists it."},` +
			`"offset":{"type":"integer","minimum":1,"description":"The 1-based line to start at; default 1."},` +
			`"limit":{"type":"integer","minimum":1,"description":"The most lines to show."},` +
			`"column":{"type":"integer","minimum":1,"description":"The 1-based character of line offset to start at, to continue a line cut by the previous result."}` +
			`},"additionalProperties":false}`),
	},
}

// historyTools are the history's tools as a turn offers them, or nothing
// without a history.
func (h *Host) historyTools() []wire.Tool {
	if h.history == nil {
		return nil
	}
	out := make([]wire.Tool, len(versionTools))
	for i, t := range versionTools {
		out[i] = wire.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	return out
}

// noHistory refuses a history tool where the Host has no history (it is
// then not offered).
var noHistory = &wire.ToolError{Code: "unknown-tool", Message: "This Chopin keeps no history of its plans: list_versions and read_version are not offered."}

// decodeArgs decodes a tool's input strictly: an unknown field, a second
// value or a wrong type is refused with what the tool takes.
func decodeArgs(input json.RawMessage, v any, takes string) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = fmt.Errorf("more than one value")
	}
	if err != nil {
		return &room.Error{Code: room.CodeInvalidArgument, Message: fmt.Sprintf("%s: %v.", takes, err)}
	}
	return nil
}

// listVersions is a page of the document's kept versions.
func (h *Host) listVersions(ctx context.Context, documentID string, input json.RawMessage) (any, error) {
	if h.history == nil {
		return nil, noHistory
	}
	var args struct {
		Before *int64 `json:"before"`
		Limit  *int   `json:"limit"`
	}
	if err := decodeArgs(input, &args, "list_versions takes {before?, limit?}"); err != nil {
		return nil, err
	}
	limit := room.VersionsPage
	if args.Limit != nil {
		if *args.Limit < 1 || *args.Limit > room.MaxVersionsPage {
			return nil, &room.Error{Code: room.CodeInvalidArgument, Message: fmt.Sprintf("list_versions: limit must be a whole number from 1 to %d.", room.MaxVersionsPage)}
		}
		limit = *args.Limit
	}
	var before int64
	if args.Before != nil {
		if *args.Before < 1 {
			return nil, &room.Error{Code: room.CodeInvalidArgument, Message: "list_versions: before must be a version of 1 or more (a page's next)."}
		}
		before = *args.Before
	}
	vs, err := h.history.Versions(ctx, documentID, before, limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Versions []room.Version `json:"versions"`
		Next     *int64         `json:"next,omitempty"`
	}{Versions: vs}
	if out.Versions == nil {
		out.Versions = []room.Version{}
	}
	if len(vs) == limit && vs[len(vs)-1].Version > 0 {
		out.Next = &vs[len(vs)-1].Version
	}
	return out, nil
}

// readVersion reads a page of the plan as it was at a version, masked as
// read_reference's pages are, after a line that says which version it is
// and where the plan is now.
func (h *Host) readVersion(ctx context.Context, r *room.Room, documentID string, input json.RawMessage) (any, error) {
	if h.history == nil {
		return nil, noHistory
	}
	var args struct {
		Version *int64 `json:"version"`
		room.ReadPlanArgs
	}
	const takes = "read_version takes {version, offset?, limit?, column?}"
	if err := decodeArgs(input, &args, takes); err != nil {
		return nil, err
	}
	if args.Version == nil || *args.Version < 0 {
		return nil, &room.Error{Code: room.CodeInvalidArgument, Message: takes + ": version is a whole number of 0 or more, as list_versions lists it."}
	}
	v := *args.Version
	text, err := h.history.VersionText(ctx, documentID, v)
	if err != nil {
		return nil, err
	}
	now := r.View()
	view := room.PlanView{Title: now.Title, URL: now.URL, Revision: v, Source: text,
		Reader: room.Reader{Tool: ToolReadVersion, Args: `"version":` + strconv.FormatInt(v, 10) + `,`}}
	page, err := room.ReadPlan(view, args.ReadPlanArgs)
	if err != nil {
		return nil, err
	}
	line := fmt.Sprintf("version: %d, as the plan was then; it is now at revision %d: read_plan reads the plan as it is now, which edit_plan edits\n", v, now.Revision)
	if vs, err := h.history.Versions(ctx, documentID, v+1, 1); err == nil && len(vs) == 1 && vs[0].Version == v {
		line = fmt.Sprintf("version: %d, made %s by %s, as the plan was then; it is now at revision %d: read_plan reads the plan as it is now, which edit_plan edits\n",
			v, time.UnixMilli(vs[0].Time).UTC().Format("2006-01-02 15:04 UTC"), authorWords(vs[0].Author), now.Revision)
	}
	return redact.Text(line + page.Text()), nil
}

// authorWords is who made a version, as a line of text says it.
func authorWords(a room.Author) string {
	switch a.Kind {
	case room.AuthorPerson:
		return "@" + a.Name
	case room.AuthorPlanner:
		if a.Turn != "" {
			return "the Planner (turn " + a.Turn + ")"
		}
		return "the Planner"
	case room.AuthorMCP:
		return "the MCP client " + strconv.Quote(a.Name)
	case room.AuthorImport:
		return "an import of the plan file"
	case room.AuthorRestore:
		return "a restore by @" + a.Name
	case room.AuthorRevert:
		return "a revert by @" + a.Name
	case room.AuthorServer:
		return "Chopin (an edit over HTTP, a decision line, or the plan's first text)"
	}
	if a.Name != "" {
		return a.Kind + " by @" + a.Name
	}
	return a.Kind
}
