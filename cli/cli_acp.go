package cli

// chopin planner --acp: an ACP agent (package acp) as the Planner of the
// documents named, and the hidden acp-mcp command the agent starts for the
// stdio MCP entry.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chopin-desktop/chopin/acp"
	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/version"
)

// acpMCPCommand is the hidden command an agent runs for the stdio MCP entry.
const acpMCPCommand = "acp-mcp"

// ACPOptions are what chopin planner --acp starts its agent with. The
// zero value is this executable's acp-mcp command and acp's own timeout;
// tests point them at the test binary and shorten the wait.
type ACPOptions struct {
	MCPStdio          []string      // the command line of the agent's stdio MCP entry
	InitializeTimeout time.Duration // how long the agent may take to answer initialize
}

// acpAgentCommand is the command line of the agent --acp names, and the
// variables its environment adds: everything after "--" for exec, an
// [[acp_agent]] of chopin.toml (which replaces a preset of its name), or
// a preset found on this computer (acp.FindPreset).
func acpAgentCommand(ctx context.Context, name string, command []string, cfg config.Config) (agent, env []string, err error) {
	if name == "exec" {
		if len(command) == 0 {
			return nil, nil, errors.New(`--acp exec needs the agent's command line after "--", such as: chopin planner --acp exec DOCUMENT -- my-agent --acp`)
		}
		return command, nil, nil
	}
	if len(command) > 0 {
		return nil, nil, fmt.Errorf(`a command line after "--" goes with --acp exec, not --acp %s`, name)
	}
	for _, a := range cfg.Agents {
		if a.Name == name {
			return a.Command, nil, nil
		}
	}
	preset, ok, err := acp.FindPreset(ctx, name)
	if err != nil {
		return nil, nil, errPresetMissing{err}
	}
	if ok {
		return preset.Command, preset.Env, nil
	}
	known := slices.Clone(acp.PresetNames)
	for _, a := range cfg.Agents {
		known = append(known, a.Name)
	}
	return nil, nil, fmt.Errorf("--acp %s: no such agent; name one of %s, an [[acp_agent]] of chopin.toml, or exec", name, strings.Join(known, ", "))
}

// errPresetMissing is a preset whose agent this computer lacks: not a
// usage error.
type errPresetMissing struct{ error }

func (c *CLI) acpPlanner(ctx context.Context, documents, command []string, flags config.Flags, o plannerOptions) int {
	if len(documents) == 0 {
		fmt.Fprint(c.Stderr, "chopin planner: name a document: its URL, as the browser shows it, or its ID.\nRun \"chopin planner --help\" for usage.\n")
		return exitUsage
	}
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	// A closed terminal (SIGHUP) stops the agent as Ctrl+C does: it runs in
	// a process group of its own, which the terminal's hangup does not
	// reach.
	ctx, stopHangup := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stopHangup()
	agent, agentEnv, err := acpAgentCommand(ctx, o.acp, command, cfg)
	var missing errPresetMissing
	switch {
	case errors.As(err, &missing):
		fmt.Fprintf(c.Stderr, "chopin planner: %v.\n", err)
		return exitError
	case err != nil:
		fmt.Fprintf(c.Stderr, "chopin planner: %v\n", err)
		return exitUsage
	}
	var env []string
	if len(agentEnv) > 0 {
		env = append(os.Environ(), agentEnv...)
	}
	endpoint, token, code := c.plannerTarget(cfg, o)
	if code != exitOK {
		return code
	}
	var outMu sync.Mutex
	say := func(line string) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintln(c.Stdout, line)
	}
	mcpStdio := c.ACP.MCPStdio
	if self, err := os.Executable(); err == nil && mcpStdio == nil {
		mcpStdio = []string{self, acpMCPCommand}
	}
	name := o.acp
	if name == "exec" {
		name = agent[0]
	}
	b, err := acp.New(acp.Config{
		Name:              name,
		Command:           agent,
		Env:               env,
		Version:           version.Build().Version,
		DataDir:           cfg.DataDir,
		Checkout:          checkoutLookup(endpoint, token),
		MCPStdio:          mcpStdio,
		InitializeTimeout: cmp.Or(c.ACP.InitializeTimeout, acp.DefaultInitializeTimeout),
		Logger:            slog.New(slog.NewTextHandler(lockedWriter{&outMu, c.Stderr}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Notify:            say,
		Problem: func(line string) {
			outMu.Lock()
			defer outMu.Unlock()
			fmt.Fprintln(c.Stderr, "chopin planner: "+line)
		},
	})
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin planner: %v\n", err)
		return exitUsage
	}
	say(fmt.Sprintf("Answering with the agent %s (%s). Press Ctrl+C to stop.", name, strings.Join(append(slices.Clone(agentEnv), agent...), " ")))
	return c.serveDocuments(documents, &outMu, func(doc string) error {
		return b.Serve(ctx, acp.Target{Document: doc, Token: token, Endpoint: endpoint})
	})
}

// checkoutLookup asks the running Chopin (GET /api/repositories, with the
// agent token) for a repository's local checkout.
func checkoutLookup(endpoint func() (string, error), token string) func(ctx context.Context, repository string) string {
	hc := &http.Client{Timeout: 10 * time.Second}
	return func(ctx context.Context, repository string) string {
		ws, err := endpoint()
		if err != nil {
			return ""
		}
		origin := "http" + strings.TrimSuffix(strings.TrimPrefix(ws, "ws"), "/api/v1/agent")
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/api/repositories", nil)
		if err != nil {
			return ""
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var list struct {
			Repositories []struct {
				Name string `json:"name"`
				Path string `json:"path"`
			} `json:"repositories"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&list) != nil {
			return ""
		}
		for _, r := range list.Repositories {
			if strings.EqualFold(r.Name, repository) {
				return r.Path
			}
		}
		return ""
	}
}

// setupACPMCP is the hidden acp-mcp command: the stdio side of the MCP
// server chopin planner --acp offers its agent.
func setupACPMCP(*flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	return func(ctx context.Context, c *CLI, _ config.Flags) int {
		getenv := c.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if err := acp.ServeStdio(ctx, getenv(acp.EnvMCPURL), getenv(acp.EnvMCPSecret), version.Build().Version); err != nil && ctx.Err() == nil {
			fmt.Fprintf(c.Stderr, "chopin %s: %v\n", acpMCPCommand, err)
			return exitError
		}
		return exitOK
	}
}
