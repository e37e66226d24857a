package app

// chopin export and chopin import: a document's plan as a Markdown file,
// and a Markdown file as a new document. Both go through the HTTP API of
// the running Chopin (plan.md, imports), so a file is checked, and a new
// document made, exactly as the UI does it, and people with the document
// open see the result at once. When Chopin is not running, the command
// starts it inside itself for the moment it needs, on a free port and
// without a browser: the same code path, the same single-instance lock,
// and nothing started is left running.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/chopin-desktop/chopin/store"
)

const exportUsage = `Usage: chopin export DOCUMENT [-o FILE] [--decisions=inline] [flags]

Writes a document's plan as Markdown, exactly as its source: to standard
output, or to FILE. DOCUMENT is the document's address as the browser shows
it (http://127.0.0.1:8787/documents/owner/name/slug), owner/name/slug, or
its ID.

  -o FILE              write to FILE instead of standard output
  --decisions=inline   write each decision card as its question and answer
                       (a Markdown quote) instead of its <Decision id="..." /> line
`

const importUsage = `Usage: chopin import FILE --repository owner/name [--title TITLE] [flags]

Creates a document in the repository from a Markdown file, checked as any
plan is: a file that cannot become a plan is refused with each problem and
its line. The title is TITLE, else the file's first "# " heading, else the
file's name. Prints the new document's address.

  --repository owner/name   the registered repository the document belongs to
  --title TITLE             the document's title
`

func setupExport(fs *flag.FlagSet) func(context.Context, *CLI, Flags) int {
	out := fs.String("o", "", "")
	decisions := fs.String("decisions", "keep", "")
	return func(ctx context.Context, c *CLI, flags Flags) int {
		if fs.NArg() != 1 {
			fmt.Fprint(c.Stderr, "chopin export: name one document: its address, owner/name/slug, or its ID.\nRun \"chopin export --help\" for usage.\n")
			return exitUsage
		}
		if *decisions != "keep" && *decisions != "inline" {
			fmt.Fprintf(c.Stderr, "chopin export: --decisions must be inline or keep, not %q\n", *decisions)
			return exitUsage
		}
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		err := c.withAPI(ctx, cfg, func(api *instanceAPI) error {
			id, err := api.documentID(ctx, fs.Arg(0))
			if err != nil {
				return err
			}
			path := "/api/channels/" + id + "/plan.md?decisions=" + *decisions
			if *out == "" {
				resp, err := api.do(ctx, "GET", path, "", nil)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, err = io.Copy(c.Stdout, resp.Body)
				return err
			}
			dest, err := filepath.Abs(*out)
			if err != nil {
				return err
			}
			partial := fmt.Sprintf("%s.partial-%d", dest, os.Getpid())
			os.Remove(partial)
			defer os.Remove(partial)
			if err := api.download(ctx, path, partial); err != nil {
				return err
			}
			return os.Rename(partial, dest)
		})
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin export: %v\n", err)
			return exitError
		}
		return exitOK
	}
}

func setupImport(fs *flag.FlagSet) func(context.Context, *CLI, Flags) int {
	repository := fs.String("repository", "", "")
	title := fs.String("title", "", "")
	return func(ctx context.Context, c *CLI, flags Flags) int {
		if fs.NArg() != 1 {
			fmt.Fprint(c.Stderr, "chopin import: name one Markdown file.\nRun \"chopin import --help\" for usage.\n")
			return exitUsage
		}
		if _, _, err := store.ParseRepositoryName(*repository); err != nil {
			fmt.Fprintf(c.Stderr, "chopin import: --repository must name a registered repository as owner/name: %v\n", err)
			return exitUsage
		}
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		file := fs.Arg(0)
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin import: %v\n", err)
			return exitError
		}
		defer f.Close()
		err = c.withAPI(ctx, cfg, func(api *instanceAPI) error {
			q := url.Values{"fileName": {filepath.Base(file)}}
			if *title != "" {
				q.Set("title", *title)
			}
			resp, err := api.do(ctx, "POST", "/api/repositories/"+*repository+"/imports?"+q.Encode(), "text/markdown; charset=utf-8", f)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			var doc channelJSON
			if err := decodeJSON(resp.Body, &doc); err != nil {
				return err
			}
			fmt.Fprintf(c.Stdout, "Imported %s as %q: %s%s\n", file, doc.Title, api.origin, doc.URL)
			return nil
		})
		var refused *apiError
		if errors.As(err, &refused) {
			fmt.Fprintf(c.Stderr, "chopin import: %s: %s\n", file, refused.Message)
			return exitError
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin import: %v\n", err)
			return exitError
		}
		return exitOK
	}
}

// withAPI runs fn with the HTTP API of the running Chopin, or, when none
// runs, of one started inside this process for the duration of fn.
func (c *CLI) withAPI(ctx context.Context, cfg Config, fn func(*instanceAPI) error) error {
	api, err := runningAPI(ctx, cfg)
	if err == nil {
		return fn(api)
	}
	if !errors.Is(err, ErrNotRunning) {
		return err
	}
	quiet := cfg
	quiet.Port, quiet.AppOrigin = 0, ""
	a, err := New(quiet, slog.New(slog.DiscardHandler))
	if errors.Is(err, ErrAlreadyRunning) {
		// Started by someone else in the meantime: use that one.
		if api, err = runningAPI(ctx, cfg); err == nil {
			return fn(api)
		}
	}
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	defer func() {
		stop()
		<-done
	}()
	api, err = runningAPI(ctx, cfg)
	if err != nil {
		return err
	}
	return fn(api)
}

// documentID resolves what a person names a document by: its address,
// owner/name/slug, or its ID.
func (api *instanceAPI) documentID(ctx context.Context, doc string) (string, error) {
	if store.ValidChannelID(doc) {
		return doc, nil
	}
	path := doc
	if u, err := url.Parse(doc); err == nil && u.Scheme != "" {
		path = u.Path
	}
	path = strings.TrimPrefix(strings.Trim(path, "/"), "documents/")
	parts := strings.Split(path, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", fmt.Errorf("%q names no document: give its address as the browser shows it, owner/name/slug, or its ID", doc)
	}
	resp, err := api.do(ctx, "GET", "/api/repositories/"+parts[0]+"/"+parts[1]+"/documents/"+parts[2], "", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var ch channelJSON
	if err := decodeJSON(resp.Body, &ch); err != nil {
		return "", err
	}
	return ch.ID, nil
}
