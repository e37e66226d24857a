package cli

// chopin repo add: register the repository of a local checkout, named by
// its origin remote, over the HTTP API of the running Chopin (or of one
// started here for the moment).

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
`

// setupRepo registers chopin repo's flags; its arguments are the
// subcommand and the path.
func setupRepo(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	name := fs.String("name", "", "")
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		args := fs.Args()
		if len(args) == 0 || args[0] != "add" {
			fmt.Fprintf(c.Stderr, "chopin repo: the one subcommand is add: %s\nRun \"%s\" for usage.\n", runCommand("repo add [PATH] [--name owner/name]"), runCommand("repo --help"))
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
