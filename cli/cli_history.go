package cli

// chopin history: a document's versions, through the running Chopin's HTTP
// API (GET /api/channels/:id/versions), as chopin export reads its plan.

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/chopin-desktop/chopin/config"
)

const historyUsage = `Usage: chopin history DOCUMENT [--limit N] [--before VERSION] [flags]

Lists the versions of a document's plan that Chopin keeps, newest first:
each version's number, time, author (a person's login, the Planner and its
model, an MCP client's name, an import, a restore) and what it changed.
DOCUMENT is the document's address, owner/name/slug, or its ID. Write one
out with chopin export DOCUMENT --version VERSION.

  --limit N          list at most N versions (1 to 200; default 50)
  --before VERSION   list the versions before VERSION (the next page)
`

// historyVersion is one version as GET …/versions answers it.
type historyVersion struct {
	Version int64 `json:"version"`
	Time    int64 `json:"time"`
	Author  struct {
		Kind  string `json:"kind"`
		Name  string `json:"name"`
		Model string `json:"model"`
	} `json:"author"`
	Summary string `json:"summary"`
}

// who is the version's author as the list shows it.
func (v historyVersion) who() string {
	a := v.Author
	switch a.Kind {
	case "person":
		return a.Name
	case "planner":
		if a.Model != "" {
			return "Planner (" + a.Model + ")"
		}
		return "Planner"
	case "mcp":
		return a.Name + " (MCP)"
	case "restore":
		return a.Name + " (restore)"
	case "revert":
		return a.Name + " (revert)"
	}
	return a.Kind
}

func setupHistory(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	limit := fs.Int("limit", 50, "")
	before := fs.Int64("before", 0, "")
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		if fs.NArg() != 1 {
			fmt.Fprint(c.Stderr, "chopin history: name one document: its address, owner/name/slug, or its ID.\nRun \"chopin history --help\" for usage.\n")
			return exitUsage
		}
		if *limit < 1 || *limit > 200 {
			fmt.Fprintf(c.Stderr, "chopin history: --limit must be a whole number from 1 to 200, not %d\n", *limit)
			return exitUsage
		}
		if *before < 0 {
			fmt.Fprintf(c.Stderr, "chopin history: --before must be a version of 1 or more, not %d\n", *before)
			return exitUsage
		}
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		var page struct {
			Versions []historyVersion `json:"versions"`
			Next     *int64           `json:"next"`
		}
		err := c.withAPI(ctx, cfg, func(api *client) error {
			id, err := api.documentID(ctx, fs.Arg(0))
			if err != nil {
				return err
			}
			path := fmt.Sprintf("/api/channels/%s/versions?limit=%d", id, *limit)
			if *before > 0 {
				path += fmt.Sprintf("&before=%d", *before)
			}
			return api.call(ctx, http.MethodGet, path, nil, &page)
		})
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin history: %v\n", err)
			return exitError
		}
		w := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "VERSION\tTIME\tAUTHOR\tCHANGE")
		for _, v := range page.Versions {
			at := time.UnixMilli(v.Time).Local().Format("2006-01-02 15:04")
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", v.Version, at, oneLine(v.who()), oneLine(v.Summary))
		}
		w.Flush()
		if page.Next != nil {
			fmt.Fprintf(c.Stderr, "Older versions: chopin history %s --before %d\n", fs.Arg(0), *page.Next)
		}
		return exitOK
	}
}

// oneLine is s without line breaks or tabs, which would break the table.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}
