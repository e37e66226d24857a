package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chopin-desktop/chopin/checkout"
	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/planner"
)

// chopin planner: the bundled Planner (package planner) against the running
// Chopin, or another one named with --url.

const plannerUsage = `Usage: chopin planner [flags] <document URL or ID>...

Runs the bundled Planner: it attaches to each document as its Planner, one
agent link each, and answers @chopin messages in Chat with a model on an
OpenAI-compatible server: Ollama, llama.cpp's server, LM Studio, vLLM or a
hosted API. It runs until interrupted (Ctrl+C), then detaches.

By default it attaches to the Chopin running on this computer (the one using
this data directory), with this computer's agent token.

  --model NAME      the model for turns that name none; a turn's own model
                    (a person's choice in Chat, or Chopin's MODEL setting)
                    wins. Default: the model chosen in Chopin's composer
                    for one of the documents, when the server has it, else
                    the server's first (the planner says which)
  --base-url URL    the model server's OpenAI-compatible API; a URL
                    without a path gets /v1. Default: the first that
                    answers of Ollama (http://127.0.0.1:11434/v1),
                    llama.cpp's llama-server (http://127.0.0.1:8080/v1),
                    LM Studio (http://127.0.0.1:1234/v1) and vLLM
                    (http://127.0.0.1:8000/v1)
  --reasoning-effort LEVEL
                    sent as reasoning_effort (such as low, medium or high),
                    for models that take one. With it, Chopin's composer
                    offers the thinking levels low, medium and high, and a
                    person's choice is sent instead
  --image-models NAMES
                    comma-separated models that read images, so Chopin
                    sends them the images a person attaches (models the
                    server lists with image inputs need not be named)
  --url URL         another Chopin: its http(s) origin, or its ws(s) agent
                    connection URL
  --token TOKEN     the agent token to present (default: the one "chopin
                    token" prints)
  --checkout PATH   the local checkout the model reads, for every document
                    (default: the checkout Chopin has for each document's
                    repository, looked up again at every turn)

Environment:
  OPENAI_BASE_URL   as --base-url
  OPENAI_API_KEY    the model server's API key, sent as a bearer; never
                    printed or logged. Local servers need none

When the document's repository has a local checkout (set on Chopin's
repositories page, or with "chopin repo add"), the model can read its code
with list_files, read_file, search_code, git_log and git_show: read-only,
confined to the checkout, never .git, with credentials masked.

With --acp, an agent that speaks the Agent Client Protocol is the Planner
instead of a model server (docs/acp.md):

  --acp claude      Claude Code: claude-agent-acp when it is installed,
                    else npx -y @zed-industries/claude-agent-acp
  --acp codex       Codex: codex-acp when it is installed, else
                    npx -y @zed-industries/codex-acp
  --acp gemini      Gemini CLI: gemini --acp (--experimental-acp for a
                    version without it), its workspace trusted for the run
  --acp NAME        an agent of chopin.toml's [[acp_agent]] tables
  --acp exec DOCUMENT... -- COMMAND [ARGS]
                    any ACP agent: everything after -- is its command line

One agent process runs per document, started at attach, with this
command's environment, in a process group of its own. Its working
directory is the repository's local checkout when one is registered,
else a folder of the document's in Chopin's data directory. Chopin's host
tools reach it as an MCP server, and it may use them without asking; its
permission requests for its own tools (commands, file writes) become
Decisions in the document. Ctrl+C, SIGTERM or a closed terminal stops the
agent and everything it started, then detaches.

Chopin's composer lets a person choose among the model server's models.
A turn asks the model at most 32 times: a model still calling tools after 32
rounds has its turn failed. When a link drops, the Planner attaches again,
after 1 second and then longer waits, up to 30 seconds (at once when
Chopin restarts, resuming what it was doing); when Chopin refuses
a document, it says why and stops serving that one.
`

type plannerOptions struct {
	model, baseURL, effort, url, token string
	imageModels, checkout              string
	acp                                string // --acp: an ACP agent instead of a model server
}

// setupPlanner registers chopin planner's flags; its documents are the
// flag set's arguments.
func setupPlanner(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	var o plannerOptions
	fs.StringVar(&o.model, "model", "", "")
	fs.StringVar(&o.baseURL, "base-url", "", "")
	fs.StringVar(&o.effort, "reasoning-effort", "", "")
	fs.StringVar(&o.url, "url", "", "")
	fs.StringVar(&o.token, "token", "", "")
	fs.StringVar(&o.imageModels, "image-models", "", "")
	fs.StringVar(&o.checkout, "checkout", "", "")
	fs.StringVar(&o.acp, "acp", "", "")
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		documents, command := splitDashes(fs.Args())
		for i, doc := range documents {
			documents[i] = documentRef(doc)
		}
		if o.acp != "" {
			return c.acpPlanner(ctx, documents, command, flags, o)
		}
		return c.planner(ctx, append(documents, command...), flags, o)
	}
}

// parseInterleaved is parse for a command that takes arguments, which may
// come before, between or after its flags. fs.Args() holds them afterwards.
func (c *CLI) parseInterleaved(fs *flag.FlagSet, args []string, usage, helpHint string) (code int, done bool) {
	var positional []string
	for {
		if code, done := c.parse(fs, args, usage, helpHint); done {
			return code, true
		}
		rest := fs.Args()
		// flag stops at the first argument that is not a flag, or after "--",
		// which makes everything after it an argument. The "--" stays among
		// them, so a command can tell what came after it (splitDashes).
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			positional = append(append(positional, "--"), rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
	_ = fs.Parse(append([]string{"--"}, positional...))
	return 0, false
}

func (c *CLI) planner(ctx context.Context, documents []string, flags config.Flags, o plannerOptions) int {
	if len(documents) == 0 {
		fmt.Fprintf(c.Stderr, "chopin planner: name a document: its URL, as the browser shows it, or its ID.\nRun \"%s\" for usage.\n", runCommand("planner --help"))
		return exitUsage
	}
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var outMu sync.Mutex
	say := func(line string) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintln(c.Stdout, line)
	}
	checkoutDir := ""
	var err error
	if o.checkout != "" {
		if checkoutDir, err = filepath.Abs(o.checkout); err == nil {
			_, err = checkout.Open(checkoutDir)
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin planner: --checkout: %v\n", err)
			return exitUsage
		}
	}
	baseURL := cmp.Or(o.baseURL, getenv("OPENAI_BASE_URL"))
	if baseURL == "" {
		if baseURL, err = c.findModelServer(ctx); err != nil {
			if ctx.Err() != nil {
				return exitOK
			}
			fmt.Fprintf(c.Stderr, "chopin planner: %v\n", err)
			return exitError
		}
	}
	p, err := planner.New(planner.Config{
		BaseURL:         baseURL,
		APIKey:          getenv("OPENAI_API_KEY"),
		Model:           o.model,
		ReasoningEffort: o.effort,
		ImageModels:     splitList(o.imageModels),
		Logger:          slog.New(slog.NewTextHandler(lockedWriter{&outMu, c.Stderr}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Notify:          say,
		Checkout:        checkoutDir,
	})
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin planner: %v\n", err)
		return exitUsage
	}

	// The model server first: the person learns at once that it is not
	// running, or does not have the model.
	checkCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = p.Check(checkCtx)
	cancel()
	if ctx.Err() != nil {
		return exitOK
	}
	var several *planner.NoModelError
	if err != nil && (!errors.As(err, &several) || len(several.Known) == 0) {
		fmt.Fprintf(c.Stderr, "chopin planner: %v\n", modelCheckError(err))
		return exitError
	}

	endpoint, token, code := c.plannerTarget(cfg, o)
	if code != exitOK {
		return code
	}
	if several != nil && len(several.Known) > 0 {
		at, _ := endpoint()
		chooseCtx, cancel := context.WithTimeout(ctx, startingWait)
		model, sentence := chooseModel(chooseCtx, at, token, documents, several.Known)
		cancel()
		p.UseModel(model)
		fmt.Fprintf(c.Stderr, "chopin planner: %s\n", sentence)
	}
	say(fmt.Sprintf("Answering with %s on %s. Press Ctrl+C to stop.", p.Model(), p.Server().BaseURL()))

	return c.serveDocuments(documents, &outMu, func(doc string) error {
		return p.Serve(ctx, planner.Target{Document: doc, Token: token, Endpoint: endpoint})
	})
}

// serveDocuments runs serve for every document at once, as one Planner
// attached to each, and says each one's error (under outMu, which the
// Planner's own lines share) when it ends. The exit code is exitError if
// any ended with an error.
func (c *CLI) serveDocuments(documents []string, outMu *sync.Mutex, serve func(doc string) error) int {
	errs := make([]error, len(documents))
	var wg sync.WaitGroup
	for i, doc := range documents {
		wg.Go(func() {
			errs[i] = serve(doc)
			if errs[i] != nil {
				outMu.Lock()
				fmt.Fprintf(c.Stderr, "chopin planner: %v\n", errs[i])
				outMu.Unlock()
			}
		})
	}
	wg.Wait()
	if errors.Join(errs...) != nil {
		return exitError
	}
	return exitOK
}

// plannerEndpoint says where the agent connection is: rawURL (an http(s)
// origin, or a ws(s) agent URL) when given, else the running Chopin of
// cfg's data directory, looked up again before each attempt, since a Chopin
// started again may serve on another port.
// plannerTarget is where a Planner command attaches and with what token:
// the running Chopin's agent endpoint (found again at every attach, or
// --url) and the local agent token (or --token). A problem is told on
// stderr and returned as the exit code; exitOK means both are known.
func (c *CLI) plannerTarget(cfg config.Config, o plannerOptions) (endpoint func() (string, error), token string, code int) {
	endpoint, err := plannerEndpoint(cfg, o.url)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin planner: %v\n", err)
		return nil, "", exitUsage
	}
	if _, err := endpoint(); err != nil {
		fmt.Fprintf(c.Stderr, "chopin planner: %v\n", err)
		return nil, "", exitError
	}
	token = o.token
	if token == "" {
		if token, err = instance.LoadOrCreateAgentToken(cfg.ConfigDir); err != nil {
			fmt.Fprintf(c.Stderr, "chopin planner: %v\n", err)
			return nil, "", exitError
		}
	}
	return endpoint, token, exitOK
}

func plannerEndpoint(cfg config.Config, rawURL string) (func() (string, error), error) {
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("--url %q is not a URL such as http://127.0.0.1:8787", rawURL)
		}
		switch u.Scheme {
		case "http", "https":
			u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
			u.Path = "/api/v1/agent"
		case "ws", "wss":
			if u.Path == "" || u.Path == "/" {
				u.Path = "/api/v1/agent"
			}
		default:
			return nil, fmt.Errorf("--url %q is not an http(s) or ws(s) URL", rawURL)
		}
		u.RawQuery, u.Fragment = "", ""
		endpoint := u.String()
		return func() (string, error) { return endpoint, nil }, nil
	}
	return func() (string, error) {
		rec, err := instance.Find(cfg.DataDir)
		switch {
		case errors.Is(err, instance.ErrNotRunning):
			return "", fmt.Errorf("Chopin is not running (data directory %s). Start it with \"%s\", or name another with --url.", cfg.DataDir, runCommand(""))
		case err != nil:
			return "", err
		case rec.Origin == "":
			return "", fmt.Errorf("Chopin (process %d) is still starting; try again in a moment.", rec.PID)
		}
		origin, err := url.Parse(rec.Origin)
		if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || !config.IsLoopbackName(origin.Hostname()) {
			// Never send the token anywhere but this computer.
			return "", fmt.Errorf("the running Chopin (process %d) recorded %q, which is not a loopback address; quit it and start Chopin again.", rec.PID, rec.Origin)
		}
		return "ws" + strings.TrimPrefix(rec.Origin, "http") + "/api/v1/agent", nil
	}, nil
}

// lockedWriter keeps log lines and the person's lines from interleaving.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// documentRef is a document as the agent connection's attach names it:
// owner/name/slug, which chopin export takes too, becomes the document's
// path (/documents/owner/name/slug); an ID or an address stays as given.
func documentRef(doc string) string {
	if u, err := url.Parse(doc); err != nil || u.Scheme != "" || strings.HasPrefix(doc, "/") {
		return doc
	}
	parts := strings.Split(doc, "/")
	if len(parts) != 3 || parts[0] == "documents" || slices.Contains(parts, "") {
		return doc
	}
	return "/documents/" + doc
}

// splitList reads a comma-separated flag value, leaving out empty names.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// splitDashes splits a command's arguments at the "--" parseInterleaved
// keeps: what comes before it, and what comes after.
func splitDashes(args []string) (before, after []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}
