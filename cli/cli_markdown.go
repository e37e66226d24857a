package cli

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
	"net/url"
	"path/filepath"

	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/ident"
)

const exportUsage = `Usage: chopin export DOCUMENT [-o FILE [--force]] [--decisions=inline] [--version N] [flags]

Writes a document's plan as Markdown, exactly as its source: to standard
output, or to FILE, readable only by you (mode 0600). DOCUMENT is the
document's address as the browser shows it
(http://127.0.0.1:8787/documents/owner/name/slug), owner/name/slug, or its
ID.

  -o FILE              write to FILE instead of standard output
  --force              replace FILE if it exists; chopin never writes over a
                       link, a folder, a pipe or a device, even with --force
  --decisions=inline   write each decision card as its question and answer
                       (a Markdown quote) instead of its <Decision id="..." /> line
  --version N          write the plan as it was at version N (chopin history
                       lists them), with its lines as they were
`

const importUsage = `Usage: chopin import FILE --repository owner/name [--title TITLE] [flags]

Creates a document in the repository from a Markdown file, checked as any
plan is: a file that cannot become a plan is refused with each problem and
its line. A file chopin export wrote imports as it is; its decision cards'
and accepted comments' lines become their text, as --decisions=inline
writes it. The title is TITLE, else the file's first "# " heading, else the
file's name; when another document of the repository has it, the next free
one ("Launch plan 2"), and the command says so. Prints the new document's
address.

  --repository owner/name   the registered repository the document belongs to
  --title TITLE             the document's title
`

func setupExport(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	out := fs.String("o", "", "")
	force := fs.Bool("force", false, "")
	decisions := fs.String("decisions", "keep", "")
	version := fs.Int64("version", -1, "")
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		if fs.NArg() != 1 {
			fmt.Fprint(c.Stderr, "chopin export: name one document: its address, owner/name/slug, or its ID.\nRun \"chopin export --help\" for usage.\n")
			return exitUsage
		}
		if *decisions != "keep" && *decisions != "inline" {
			fmt.Fprintf(c.Stderr, "chopin export: --decisions must be inline or keep, not %q\n", *decisions)
			return exitUsage
		}
		if *version < -1 || *version >= 0 && *decisions != "keep" {
			fmt.Fprint(c.Stderr, "chopin export: --version takes a version of 0 or more (chopin history lists them), and writes it as it was, without --decisions=inline\n")
			return exitUsage
		}
		if *force && *out == "" {
			fmt.Fprint(c.Stderr, "chopin export: --force replaces the file that -o names; add -o FILE, or leave --force out\nRun \"chopin export --help\" for usage.\n")
			return exitUsage
		}
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		planPath := func(api *client) (string, error) {
			id, err := api.documentID(ctx, fs.Arg(0))
			if *version >= 0 {
				return fmt.Sprintf("/api/channels/%s/versions/%d/plan.md", id, *version), err
			}
			return "/api/channels/" + id + "/plan.md?decisions=" + *decisions, err
		}
		var err error
		if *out == "" {
			err = c.withAPI(ctx, cfg, func(api *client) error {
				path, err := planPath(api)
				if err != nil {
					return err
				}
				resp, err := api.do(ctx, "GET", path, "", nil)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, err = io.Copy(c.Stdout, resp.Body)
				return err
			})
		} else {
			var dest string
			if dest, err = filepath.Abs(*out); err == nil {
				// The target is checked before Chopin is asked (or started).
				err = writeNamedFile(dest, *force, 0o600, func(partial string) error {
					return c.withAPI(ctx, cfg, func(api *client) error {
						path, err := planPath(api)
						if err != nil {
							return err
						}
						return api.download(ctx, path, partial)
					})
				})
			}
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin export: %v\n", err)
			return exitError
		}
		return exitOK
	}
}

func setupImport(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	repository := fs.String("repository", "", "")
	title := fs.String("title", "", "")
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		if fs.NArg() != 1 {
			fmt.Fprint(c.Stderr, "chopin import: name one Markdown file.\nRun \"chopin import --help\" for usage.\n")
			return exitUsage
		}
		if _, _, err := ident.ParseRepository(*repository); err != nil {
			fmt.Fprintf(c.Stderr, "chopin import: --repository must name a registered repository as owner/name: %v\n", err)
			return exitUsage
		}
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		file := fs.Arg(0)
		f, err := openRegular(file, "name a Markdown file")
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin import: %v\n", err)
			return exitError
		}
		defer f.Close()
		err = c.withAPI(ctx, cfg, func(api *client) error {
			q := url.Values{"fileName": {filepath.Base(file)}}
			if *title != "" {
				q.Set("title", *title)
			}
			resp, err := api.do(ctx, "POST", "/api/repositories/"+*repository+"/imports?"+q.Encode(), "text/markdown; charset=utf-8", contextReader{ctx, f})
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			var doc struct {
				document
				Notice string `json:"notice"` // the title was taken: which it got instead
			}
			if err := decodeJSON(resp.Body, &doc); err != nil {
				return err
			}
			fmt.Fprintf(c.Stdout, "Imported %s as %q: %s%s\n", file, doc.Title, api.origin, doc.URL)
			if doc.Notice != "" {
				fmt.Fprintln(c.Stdout, doc.Notice)
			}
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
