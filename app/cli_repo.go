package app

// chopin repo add: register the repository of a local checkout, named by
// its origin remote, with the running Chopin over its HTTP API, or, when
// none runs, in the database directly under the instance lock.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"

	"github.com/chopin-desktop/chopin/checkout"
	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/store"
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
func setupRepo(fs *flag.FlagSet) func(context.Context, *CLI, Flags) int {
	name := fs.String("name", "", "")
	return func(ctx context.Context, c *CLI, flags Flags) int {
		args := fs.Args()
		if len(args) == 0 || args[0] != "add" {
			fmt.Fprint(c.Stderr, "chopin repo: the one subcommand is add: chopin repo add [PATH] [--name owner/name]\nRun \"chopin repo --help\" for usage.\n")
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

func (c *CLI) repoAdd(ctx context.Context, flags Flags, path, name string) int {
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	abs, err := checkoutPath(ctx, path)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo add: %s\n", errorMessage(err))
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
	if _, _, err := store.ParseRepositoryName(name); err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo add: %s\n", errorMessage(err))
		return exitUsage
	}
	var again bool
	inst, err := AcquireInstance(cfg.DataDir)
	switch {
	case errors.Is(err, ErrAlreadyRunning):
		again, err = c.repoAddRunning(ctx, cfg, name, abs)
	case err != nil:
	default:
		again, err = repoAddStore(ctx, cfg, name, abs)
		inst.Release()
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin repo add: %s\n", errorMessage(err))
		return exitError
	}
	if again {
		fmt.Fprintf(c.Stdout, "%s was registered already; its local checkout is now %s.\n", name, abs)
	} else {
		fmt.Fprintf(c.Stdout, "Registered %s, with its local checkout at %s.\n", name, abs)
	}
	return exitOK
}

// errorMessage is what a person reads of an error: a domain refusal's own
// sentence.
func errorMessage(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return sentence(fe.Message)
	}
	return sentence(err.Error())
}

// repoAddStore registers name in the database while no Chopin runs.
// again is set when name was registered already and got the path.
func repoAddStore(ctx context.Context, cfg Config, name, path string) (again bool, err error) {
	s, err := store.Open(ctx, filepath.Join(cfg.DataDir, "chopin.db"))
	if err != nil {
		return false, err
	}
	defer s.Close()
	_, err = s.AddRepository(ctx, name, path)
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Code == "repository-exists" {
		owner, repo, _ := store.ParseRepositoryName(name)
		_, err = s.SetRepositoryPath(ctx, owner, repo, path)
		return true, err
	}
	return false, err
}

// repoAddRunning registers name with the running Chopin, through the same
// HTTP API the UI uses, presenting the agent token.
func (c *CLI) repoAddRunning(ctx context.Context, cfg Config, name, path string) (again bool, err error) {
	rec, err := waitForOrigin(ctx, cfg.DataDir)
	if err != nil {
		return false, err
	}
	origin, err := url.Parse(rec.Origin)
	if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || !isLoopbackName(origin.Hostname()) {
		return false, fmt.Errorf("the running Chopin (process %d) recorded %q, which is not a loopback address; quit it and start Chopin again", rec.PID, rec.Origin)
	}
	token, err := ReadAgentToken(cfg.ConfigDir)
	if err != nil {
		return false, fmt.Errorf("Chopin is running at %s, but the agent token in %s cannot be read: %v", rec.Origin, cfg.ConfigDir, err)
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 30 * answerTimeout}
	send := func(method, path string, body any) (int, string, error) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, method, rec.Origin+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", fmt.Errorf("Chopin at %s does not answer: %v", rec.Origin, err)
		}
		defer resp.Body.Close()
		var e struct{ Code, Message string }
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode >= 300 && e.Message == "" {
			e.Message = fmt.Sprintf("Chopin at %s answered %s", rec.Origin, resp.Status)
		}
		return resp.StatusCode, e.Code, errorIf(resp.StatusCode >= 300, e.Message)
	}
	status, code, err := send(http.MethodPost, "/api/repositories", map[string]string{"name": name, "path": path})
	if status == http.StatusConflict && code == "repository-exists" {
		owner, repo, _ := store.ParseRepositoryName(name)
		_, _, err = send(http.MethodPatch, "/api/repositories/"+url.PathEscape(owner)+"/"+url.PathEscape(repo), map[string]string{"path": path})
		return true, err
	}
	return false, err
}

func errorIf(cond bool, message string) error {
	if cond {
		return errors.New(message)
	}
	return nil
}
