package cli

// chopin repo add, rename and remove: register the repository of a local
// checkout, named by its origin remote; rename a repository; remove one,
// saying what becomes of its documents. Each over the HTTP API of the
// running Chopin (or of one started here for the moment).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/chopin-desktop/chopin/checkout"
	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/ident"
)

const repoUsage = `Usage: chopin repo add [PATH] [--name owner/name] [flags]
       chopin repo rename OLD NEW [flags]
       chopin repo remove NAME [--archive-documents] [flags]

Registers the repository of the local checkout at PATH (default: the
current folder), so its documents' Planner can read its code. PATH must be
the top folder of a Git work tree. The repository is named after the
checkout's origin remote: https://github.com/owner/name.git,
ssh://git@host/owner/name.git and git@host:owner/name.git all give
owner/name (GitHub, GitLab or any host; a GitLab subgroup gives its last two
parts). A repository already registered under that name gets this checkout.
Works whether Chopin is running or not.

  --name owner/name  the repository's name, instead of the origin remote's
                     (needed when the checkout has no origin remote)

rename gives the repository OLD the name NEW (owner/name, such as
acme/website). Its documents stay, with their addresses: links with the old
name lead to the new one. A name another repository has is refused.

remove takes the repository NAME off the list. Documents are never
deleted: a repository with active documents is refused, unless
--archive-documents archives them. Adding NAME again brings the repository
back with its archived documents. If chopin.toml lists NAME, it stays
removed at the next start; delete its [[repository]] table there.

  --archive-documents  archive the repository's active documents and remove it
`

// setupRepo registers chopin repo's flags; its arguments are the
// subcommand and the path.
func setupRepo(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	name := fs.String("name", "", "")
	archive := fs.Bool("archive-documents", false, "")
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		args := fs.Args()
		switch {
		case len(args) == 3 && args[0] == "rename":
			return c.repoRename(ctx, flags, args[1], args[2])
		case len(args) == 2 && args[0] == "remove":
			return c.repoRemove(ctx, flags, args[1], *archive)
		case len(args) == 0 || args[0] != "add":
			fmt.Fprintf(c.Stderr, "chopin repo: the subcommands are %s, %s and %s\nRun \"%s\" for usage.\n",
				runCommand("repo add [PATH] [--name owner/name]"), runCommand("repo rename OLD NEW"),
				runCommand("repo remove NAME [--archive-documents]"), runCommand("repo --help"))
			return exitUsage
		}
		if len(args) > 2 {
			fmt.Fprintf(c.Stderr, "chopin repo add: unexpected argument %q; give one checkout folder.\n", args[2])
			return exitUsage
		}
		path := "."
		if len(args) == 2 {
			path = args[1]
		}
		return c.repoAdd(ctx, flags, path, *name)
	}
}

func (c *CLI) repoAdd(ctx context.Context, flags config.Flags, path, name string) int {
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	inspect, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	abs, err := checkout.Dir(inspect, path)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo add: %s\n", fault.Sentence(err.Error()))
		return exitError
	}
	if name == "" {
		info, _ := checkout.Inspect(ctx, abs)
		owner, repo, ok := checkout.ParseRemote(info.Origin)
		if !ok {
			why := "has no origin remote"
			if info.Origin != "" {
				why = fmt.Sprintf("has an origin remote (%s) that names no owner/name", info.Origin)
			}
			fmt.Fprintf(c.Stderr, "chopin repo add: the checkout %s %s. Name its repository with --name owner/name.\n", abs, why)
			return exitUsage
		}
		name = owner + "/" + repo
	}
	owner, repo, err := ident.ParseRepository(name)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo add: %s\n", fault.Sentence(err.Error()))
		return exitUsage
	}
	var again bool
	err = c.withAPI(ctx, cfg, func(api *client) error {
		err := api.call(ctx, http.MethodPost, "/api/repositories", map[string]string{"name": name, "path": abs}, nil)
		var refused *apiError
		if errors.As(err, &refused) && refused.Code == "repository-exists" {
			again = true
			return api.call(ctx, http.MethodPatch, "/api/repositories/"+url.PathEscape(owner)+"/"+url.PathEscape(repo), map[string]string{"path": abs}, nil)
		}
		return err
	})
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo add: %s\n", fault.Sentence(err.Error()))
		return exitError
	}
	if again {
		fmt.Fprintf(c.Stdout, "%s was registered already; its local checkout is now %s.\n", name, abs)
	} else {
		fmt.Fprintf(c.Stdout, "Registered %s, with its local checkout at %s.\n", name, abs)
	}
	return exitOK
}

// inspectTimeout bounds Git's look at the checkout a person names.
const inspectTimeout = 15 * time.Second

// repoPath is the API path of the repository named owner/name, or a
// usage error in words.
func repoPath(full string) (string, error) {
	owner, repo, err := ident.ParseRepository(full)
	if err != nil {
		return "", err
	}
	return "/api/repositories/" + url.PathEscape(owner) + "/" + url.PathEscape(repo), nil
}

func (c *CLI) repoRename(ctx context.Context, flags config.Flags, old, name string) int {
	path, err := repoPath(old)
	if err == nil {
		_, _, err = ident.ParseRepository(name)
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo rename: %s\n", fault.Sentence(err.Error()))
		return exitUsage
	}
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	var got struct {
		Name string `json:"name"`
	}
	err = c.withAPI(ctx, cfg, func(api *client) error {
		return api.call(ctx, http.MethodPatch, path, map[string]string{"name": name}, &got)
	})
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo rename: %s\n", fault.Sentence(err.Error()))
		return exitError
	}
	fmt.Fprintf(c.Stdout, "Renamed %s to %s. Its documents keep their addresses: links with %s lead to %s.\n", old, got.Name, old, got.Name)
	return exitOK
}

func (c *CLI) repoRemove(ctx context.Context, flags config.Flags, name string, archive bool) int {
	path, err := repoPath(name)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo remove: %s\n", fault.Sentence(err.Error()))
		return exitUsage
	}
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	documents := "refuse"
	if archive {
		documents = "archive"
	}
	err = c.withAPI(ctx, cfg, func(api *client) error {
		return api.call(ctx, http.MethodDelete, path+"?documents="+documents, nil, nil)
	})
	var refused *apiError
	if errors.As(err, &refused) && refused.Code == "repository-has-documents" {
		fmt.Fprintf(c.Stderr, "chopin repo remove: %s Nothing was removed; to archive them and remove it, run %s.\n",
			fault.Sentence(refused.Message), runCommand("repo remove "+name+" --archive-documents"))
		return exitError
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo remove: %s\n", fault.Sentence(err.Error()))
		return exitError
	}
	fmt.Fprintf(c.Stdout, "Removed %s. Its documents are kept, archived; add %s again to get them back.\n", name, name)
	return exitOK
}
