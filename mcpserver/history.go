package mcpserver

// A plan's history for agents: list_versions pages the versions a document
// keeps, and read_document's version reads the plan as it was at one.

import (
	"context"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chopin-desktop/chopin/room"
)

// History is what list_versions and read_document's version need: the
// document's kept versions, newest first, before the version before (all
// when 0), and the plan's text at one (a refusal naming the nearest kept
// versions when the history does not keep it).
type History interface {
	Versions(ctx context.Context, id string, before int64, limit int) ([]room.Version, error)
	VersionText(ctx context.Context, id string, version int64) (string, error)
}

func (s *Server) listVersionsTool() tool {
	type listArgs = struct {
		ID     *string `json:"id"`
		Before *int64  `json:"before"`
		Limit  *int    `json:"limit"`
	}
	return tool{
		spec: &mcp.Tool{Name: "list_versions", Title: "List a document's versions",
			Description: "List the versions of a document's plan that Chopin keeps, " + room.VersionsListed +
				" Pass nextBefore as before for the next page. " +
				"Read one with read_document's version. Returns {id, versions: [{version, time, author, summary}], nextBefore: integer or null}. " +
				"Refusals: document-unavailable."},
		required: []string{"id"},
		props: idProp + `,"before":{"type":"integer","minimum":1,"description":"List the versions before this one (a page's nextBefore)."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":200}`,
		outRequired: []string{"id", "versions", "nextBefore"},
		outProps: `"id":{"type":"string"},"versions":{"type":"array","items":{"type":"object","properties":{` +
			`"version":{"type":"integer"},"time":{"type":"integer"},"author":{"type":"object"},"summary":{"type":"string"}},` +
			`"required":["version","time","author","summary"]}},"nextBefore":{"type":["integer","null"]}`,
		run: typed(func(ctx context.Context, c call, args listArgs) (any, error) {
			limit := room.VersionsPage
			if args.Limit != nil {
				if *args.Limit < 1 || *args.Limit > room.MaxVersionsPage {
					return nil, invalidParams("Invalid arguments: limit must be a whole number from 1 to %d.", room.MaxVersionsPage)
				}
				limit = *args.Limit
			}
			var before int64
			if args.Before != nil {
				if *args.Before < 1 {
					return nil, invalidParams("Invalid arguments: before must be a version of 1 or more.")
				}
				before = *args.Before
			}
			d, err := s.locate(ctx, *args.ID)
			if err != nil {
				return nil, err
			}
			if s.history == nil {
				return nil, refuse(CodeInternal, "This Chopin keeps no history of its plans.")
			}
			vs, err := s.history.Versions(ctx, d.ID, before, limit)
			if err != nil {
				return nil, err
			}
			out := struct {
				ID         string         `json:"id"`
				Versions   []room.Version `json:"versions"`
				NextBefore *int64         `json:"nextBefore"`
			}{ID: d.ID, Versions: vs}
			if len(vs) == limit && vs[len(vs)-1].Version > 0 {
				out.NextBefore = &vs[len(vs)-1].Version
			}
			return out, nil
		}),
	}
}

// versionView is the plan as it was at version, for read_document.
func (s *Server) versionView(ctx context.Context, id string, version int64) (room.PlanView, error) {
	if version < 0 {
		return room.PlanView{}, invalidParams("Invalid arguments: version must be a whole number, at least 0.")
	}
	now, err := s.plans.View(ctx, id)
	if err != nil {
		return room.PlanView{}, err
	}
	text, err := s.history.VersionText(ctx, id, version)
	if err != nil {
		return room.PlanView{}, err
	}
	return room.PlanView{Title: now.Title, URL: now.URL, Revision: version, Source: text, Blocks: room.Blocks(text)}, nil
}

// versionLine is what read_document's text says first of an earlier
// version, so a model does not edit from it by mistake.
func versionLine(version, current int64) string {
	return "version: " + strconv.FormatInt(version, 10) + ", as the plan was then; it is now at revision " +
		strconv.FormatInt(current, 10) + " (read without version for the current plan)\n"
}
