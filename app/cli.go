package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chopin-desktop/chopin/store"
)

// The chopin command line. main hands it the arguments; everything a command
// does beyond parsing is in New/Run or the functions of this package.

// CLI runs chopin's commands. Its fields are what a command touches of the
// outside world, so tests can run commands in-process.
type CLI struct {
	Stdin          io.Reader // what `chopin mcp` forwards
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// OpenURL opens a link in the person's browser; OpenBrowser if nil.
	OpenURL func(url string) error
}

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2

	// How long a second process waits for a first one that is still
	// starting to record its origin, and for it to answer.
	startingWait  = 10 * time.Second
	answerTimeout = 3 * time.Second
)

var usageText = `Chopin: write plans with an AI Planner, on your own computer.

Usage:
  chopin [flags]                  start Chopin, or find the one running, and open it in the browser
  chopin serve [flags]            start Chopin without opening a browser
  chopin open [--print-url] [PAGE] open the running Chopin in the browser
  chopin token [--rotate]         print, or replace, the local agent token
  chopin planner DOCUMENT...      be a document's Planner, with a model on Ollama or another OpenAI-compatible server
  chopin repo add [PATH]          register the repository of a local checkout (its origin remote names it)
  chopin mcp                      serve the local agent MCP tools over stdio, for MCP clients that launch a command
  chopin backup FILE [--force]    write a checked copy of the database, even while Chopin runs
  chopin export DOCUMENT          write a document's plan as Markdown (-o FILE, --decisions=inline)
  chopin import FILE              make a document from a Markdown file (--repository owner/name, --title)
  chopin desktop-entry            add Chopin, with its icon, to a Linux desktop's application menu
  chopin version                  print the version, commit and build date (also --version)

Run "chopin COMMAND --help" for a command's own flags.
` + globalFlagsText + environmentText

// The global flags and the environment, as --help lists them: from the
// settings table.
var (
	globalFlagsText = flagsHelp()
	environmentText = environmentHelp()
)

func flagsHelp() string {
	var rows []*setting
	for i := range settings {
		if settings[i].flag != "" {
			rows = append(rows, &settings[i])
		}
	}
	slices.SortFunc(rows, func(a, b *setting) int { return strings.Compare(a.flag, b.flag) })
	var b strings.Builder
	b.WriteString("\nFlags, for every command (they win over the environment and chopin.toml):\n")
	for _, s := range rows {
		where := s.env
		if where == "" {
			where = s.defaultHelp()
		}
		fmt.Fprintf(&b, "  %-15s  %s (%s)\n", "--"+s.flag+" "+s.flagArg, s.allowed(), where)
	}
	return b.String()
}

func environmentHelp() string {
	width := 0
	for _, s := range settings {
		width = max(width, len(s.env))
	}
	var b strings.Builder
	b.WriteString("\nEnvironment (wins over chopin.toml; chopin.toml.example explains each):\n")
	for _, s := range settings {
		if s.env == "" {
			continue
		}
		line := s.allowed()
		if d := s.defaultHelp(); d != "" {
			line += " (" + d + ")"
		}
		fmt.Fprintf(&b, "  %-*s  %s\n", width, s.env, line)
	}
	return b.String()
}

type command struct {
	name, usage string
	// setup registers the command's own flags and returns the command,
	// which reads them once they are parsed.
	setup func(fs *flag.FlagSet) (run func(ctx context.Context, c *CLI, flags Flags) int)
	// args: the command takes arguments, which run reads from fs.Args().
	args bool
}

var commands = []command{
	{
		name: "serve",
		usage: `Usage: chopin serve [flags]

Starts Chopin and serves it until interrupted, without opening a browser.
Run "chopin open" to open it. If Chopin is already running with the same
data directory, says where and exits 1.

  --no-browser     accepted for clarity; serve never opens a browser
`,
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, Flags) int {
			fs.Bool("no-browser", true, "")
			return func(ctx context.Context, c *CLI, flags Flags) int { return c.start(ctx, flags, false) }
		},
	},
	{
		name: "open",
		args: true,
		usage: `Usage: chopin open [--print-url] [--sign-out-everywhere] [flags] [PAGE]

Opens the running Chopin in the browser through a fresh sign-in link, and
prints the link. The link works once, within 2 minutes. Exits 1 if Chopin
is not running. PAGE is the page to land on, as a path such as
/documents/octo/plans/launch or as its whole address; without it, the
repositories.

  --print-url             print the link without opening a browser
  --sign-out-everywhere   sign every browser out instead (whether Chopin runs
                          or not); each needs a new link to come back
`,
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, Flags) int {
			printOnly := fs.Bool("print-url", false, "")
			signOut := fs.Bool("sign-out-everywhere", false, "")
			return func(ctx context.Context, c *CLI, flags Flags) int {
				cfg, ok := c.loadConfig(flags)
				if !ok {
					return exitError
				}
				if fs.NArg() > 1 {
					fmt.Fprintf(c.Stderr, "chopin open: one page at most, not %d\nRun \"chopin open --help\" for usage.\n", fs.NArg())
					return exitUsage
				}
				if *signOut {
					if fs.NArg() > 0 {
						fmt.Fprintf(c.Stderr, "chopin open: --sign-out-everywhere opens no page\n")
						return exitUsage
					}
					return c.signOutEverywhere(ctx, cfg)
				}
				page, err := pagePath(fs.Arg(0))
				if err != nil {
					fmt.Fprintf(c.Stderr, "chopin open: %v\n", err)
					return exitUsage
				}
				return c.openRunning(ctx, cfg, *printOnly, page)
			}
		},
	},
	{
		name: "token",
		usage: `Usage: chopin token [--rotate] [flags]

Prints the local agent token, the bearer that agent clients and scripts
present to Chopin, creating it if there is none yet. It is kept in the file
agent-token in the config directory, readable only by you.

  --rotate         replace the token with a new one and print it; a running
                   Chopin refuses the old one from then on and closes the agent
                   links attached with it
`,
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, Flags) int {
			rotate := fs.Bool("rotate", false, "")
			return func(_ context.Context, c *CLI, flags Flags) int { return c.token(flags, *rotate) }
		},
	},
	{name: "planner", usage: plannerUsage, setup: setupPlanner, args: true},
	{name: "repo", usage: repoUsage, setup: setupRepo, args: true},
	{name: "mcp", usage: mcpUsage, setup: setupMCP},
	{name: "backup", usage: backupUsage, setup: setupBackup, args: true},
	{name: "export", usage: exportUsage, setup: setupExport, args: true},
	{name: "import", usage: importUsage, setup: setupImport, args: true},
	{name: "desktop-entry", usage: desktopEntryUsage, setup: setupDesktopEntry},
	{name: acpMCPCommand, usage: "Usage: chopin acp-mcp\n\nStarted by chopin planner --acp for its agent; not for people.\n", setup: setupACPMCP},
	{
		name:  "version",
		usage: "Usage: chopin version\n\nPrints the version of this chopin, the commit it was built from and when\n(also: chopin --version).\n",
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, Flags) int {
			return func(_ context.Context, c *CLI, _ Flags) int {
				fmt.Fprintln(c.Stdout, Build())
				return exitOK
			}
		},
	},
}

// Run runs the command in args (without the program name) and returns the
// exit status: 0, 1 when the command failed, 2 for a usage mistake.
func (c *CLI) Run(ctx context.Context, args []string) int {
	var flags Flags
	top := c.flagSet("chopin", &flags)
	showVersion := top.Bool("version", false, "")
	if code, done := c.parse(top, args, usageText, "chopin --help"); done {
		return code
	}
	if *showVersion {
		fmt.Fprintln(c.Stdout, Build())
		return exitOK
	}
	if top.NArg() == 0 {
		return c.start(ctx, flags, true)
	}
	name, rest := top.Arg(0), top.Args()[1:]
	if name == "help" {
		return c.help(rest)
	}
	for _, cmd := range commands {
		if cmd.name != name {
			continue
		}
		fs := c.flagSet("chopin "+name, &flags)
		run := cmd.setup(fs)
		parse := c.parse
		if cmd.args {
			parse = c.parseInterleaved
		}
		if code, done := parse(fs, rest, cmd.usage+globalFlagsText, "chopin "+name+" --help"); done {
			return code
		}
		if fs.NArg() > 0 && !cmd.args {
			fmt.Fprintf(c.Stderr, "chopin %s: unexpected argument %q\nRun \"chopin %s --help\" for usage.\n", name, fs.Arg(0), name)
			return exitUsage
		}
		return run(ctx, c, flags)
	}
	fmt.Fprintf(c.Stderr, "chopin: unknown command %q\nRun \"chopin --help\" for usage.\n", name)
	return exitUsage
}

func (c *CLI) help(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.Stdout, usageText)
		return exitOK
	}
	for _, cmd := range commands {
		if cmd.name == args[0] {
			fmt.Fprint(c.Stdout, cmd.usage+globalFlagsText)
			return exitOK
		}
	}
	fmt.Fprintf(c.Stderr, "chopin help: unknown command %q\nRun \"chopin --help\" for usage.\n", args[0])
	return exitUsage
}

// flagSet makes a flag set with the global flags, which every command
// accepts before or after its name.
func (c *CLI) flagSet(name string, flags *Flags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors in its own words
	text := func(dst *string) func(string) error {
		return func(s string) error {
			if s == "" {
				return errors.New("needs a value")
			}
			*dst = s
			return nil
		}
	}
	for _, s := range settings {
		if s.flag != "" {
			fs.Func(s.flag, "", text(s.flagValue(flags)))
		}
	}
	return fs
}

// parse parses args; done is true when the command should end with code.
func (c *CLI) parse(fs *flag.FlagSet, args []string, usage, helpHint string) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(c.Stdout, usage)
		return exitOK, true
	default:
		fmt.Fprintf(c.Stderr, "%s: %v\nRun \"%s\" for usage.\n", fs.Name(), err, helpHint)
		return exitUsage, true
	}
}

func (c *CLI) loadConfig(flags Flags) (Config, bool) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg, err := LoadConfig(flags, getenv)
	var bad *ConfigError
	if errors.As(err, &bad) {
		fmt.Fprintln(c.Stderr, "chopin: cannot start, the configuration has problems:")
		for _, p := range bad.Problems {
			fmt.Fprintln(c.Stderr, "  "+p)
		}
		return Config{}, false
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return Config{}, false
	}
	return cfg, true
}

func (c *CLI) openURL(link string) error {
	if c.OpenURL != nil {
		return c.OpenURL(link)
	}
	return OpenBrowser(link)
}

// start serves Chopin until ctx ends. With browser set (plain "chopin", a
// double-click) it opens the browser, and when Chopin already runs it opens
// that one instead and exits.
func (c *CLI) start(ctx context.Context, flags Flags, browser bool) int {
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	logger := slog.New(slog.NewTextHandler(c.Stderr, nil))
	a, err := New(cfg, logger)
	if errors.Is(err, ErrAlreadyRunning) {
		if browser {
			return c.openRunning(ctx, cfg, false, "")
		}
		var running *AlreadyRunningError
		errors.As(err, &running)
		fmt.Fprintf(c.Stderr, "chopin: %v.\nRun \"chopin open\" to open it in the browser.\n", running)
		return exitError
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	defer a.Close()

	fmt.Fprintf(c.Stdout, "Chopin is running at %s. Press Ctrl+C to stop it.\n", a.URL())
	if browser {
		link := a.NewLaunchURL()
		go func() {
			if err := c.openURL(link); err != nil {
				logger.Warn("could not open a browser", "err", err)
				fmt.Fprintf(c.Stdout, "Open this link in your browser to start (it works once, within 2 minutes):\n%s\nLater, run \"chopin open\" for a new one.\n", link)
			}
		}()
	}
	if err := a.Run(ctx); err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	return exitOK
}

// pagePath is the page chopin open lands on, as the launch link's next: a
// path, or the path of a whole address ("" for the repositories). The
// running Chopin keeps next on its own origin whatever it is.
func pagePath(arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	u, err := url.Parse(arg)
	if err != nil || (u.Scheme == "" && !strings.HasPrefix(arg, "/")) || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%q is not a page of Chopin: give its path, such as /documents/octo/plans/launch, or its address", arg)
	}
	if u.Scheme == "" {
		return arg, nil
	}
	return u.RequestURI(), nil
}

// openRunning gets a fresh sign-in link from the Chopin running with cfg's
// data directory, landing on page (a path, "" for the repositories), and
// opens it in the browser or, with printOnly, prints it.
func (c *CLI) openRunning(ctx context.Context, cfg Config, printOnly bool, page string) int {
	rec, err := waitForOrigin(ctx, cfg.DataDir)
	if errors.Is(err, ErrNotRunning) {
		fmt.Fprintf(c.Stderr, "chopin: Chopin is not running (data directory %s).\nStart it with \"chopin\".\n", cfg.DataDir)
		return exitError
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	link, err := requestLaunchURL(ctx, rec, cfg.ConfigDir)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	if page != "" {
		link += "&next=" + url.QueryEscape(page)
	}
	if printOnly {
		fmt.Fprintln(c.Stdout, link)
		return exitOK
	}
	if err := c.openURL(link); err != nil {
		fmt.Fprintf(c.Stderr, "chopin: could not open a browser: %v\n", err)
	}
	fmt.Fprintf(c.Stdout, "Chopin is running at %s. If the browser did not open, open this link (it works once, within 2 minutes):\n%s\n", rec.Origin, link)
	return exitOK
}

// waitForOrigin finds the running instance, waiting a little for one that is
// still starting to record where it serves.
func waitForOrigin(ctx context.Context, dataDir string) (InstanceRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, startingWait)
	defer cancel()
	for {
		rec, err := FindInstance(dataDir)
		if err != nil || rec.Origin != "" {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return rec, fmt.Errorf("Chopin is running (process %d) but has not said where after %s; if it stays like this, end process %d and start Chopin again", rec.PID, startingWait, rec.PID)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// requestLaunchURL asks the running instance for a one-time sign-in link,
// presenting the agent token of configDir.
// signOutEverywhere ends every browser session: through the running
// Chopin when there is one, else in its database directly.
func (c *CLI) signOutEverywhere(ctx context.Context, cfg Config) int {
	n, err := signOutEverywhere(ctx, cfg)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	fmt.Fprintf(c.Stdout, "Signed out %d browser sessions. Run \"chopin open\" to sign this browser in again.\n", n)
	return 0
}

func signOutEverywhere(ctx context.Context, cfg Config) (int64, error) {
	inst, err := AcquireInstance(cfg.DataDir)
	if err == nil { // not running: the database is ours for a moment
		defer inst.Release()
		if err := databaseStillThere(cfg.DataDir); err != nil {
			return 0, err
		}
		st, err := store.Open(ctx, filepath.Join(cfg.DataDir, databaseFile))
		if err != nil {
			return 0, err
		}
		defer st.Close()
		return st.SignOutEverywhere(ctx)
	}
	if !errors.Is(err, ErrAlreadyRunning) {
		return 0, err
	}
	rec, err := waitForOrigin(ctx, cfg.DataDir)
	if err != nil {
		return 0, err
	}
	var out struct {
		SignedOut int64 `json:"signedOut"`
	}
	if err := callRunning(ctx, rec, cfg.ConfigDir, http.MethodPost, "/api/session/sign-out-everywhere", &out); err != nil {
		return 0, err
	}
	return out.SignedOut, nil
}

// callRunning calls the running Chopin's API with the agent token.
func callRunning(ctx context.Context, rec InstanceRecord, configDir, method, path string, out any) error {
	origin, err := url.Parse(rec.Origin)
	if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || !isLoopbackName(origin.Hostname()) {
		return fmt.Errorf("the running Chopin (process %d) recorded %q, which is not a loopback address; quit it and start Chopin again", rec.PID, rec.Origin)
	}
	token, err := ReadAgentToken(configDir)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: answerTimeout}
	req, _ := http.NewRequestWithContext(ctx, method, rec.Origin+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("Chopin is running (process %d) but does not answer at %s: %v", rec.PID, rec.Origin, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("Chopin at %s answered %s", rec.Origin, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(out)
}

func requestLaunchURL(ctx context.Context, rec InstanceRecord, configDir string) (string, error) {
	origin, err := url.Parse(rec.Origin)
	if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || !isLoopbackName(origin.Hostname()) {
		// Never send the token anywhere but this computer.
		return "", fmt.Errorf("the running Chopin (process %d) recorded %q, which is not a loopback address; quit it and start Chopin again", rec.PID, rec.Origin)
	}
	token, err := ReadAgentToken(configDir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("Chopin is running at %s, but there is no agent token in %s to ask it for a sign-in link; is it using another config directory (CHOPIN_CONFIG_DIR)?", rec.Origin, configDir)
	}
	if err != nil {
		return "", err
	}
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil}, // loopback: never through a proxy
		Timeout:   answerTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	notAnswering := func(err error) error {
		return fmt.Errorf("Chopin is running (process %d) but does not answer at %s: %v\nIf it stays like this, quit it (or end process %d) and start Chopin again", rec.PID, rec.Origin, err, rec.PID)
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rec.Origin+"/healthz", nil)
	resp, err := client.Do(req)
	if err != nil {
		return "", notAnswering(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", notAnswering(fmt.Errorf("/healthz answered %s", resp.Status))
	}

	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, rec.Origin+"/api/launch-links", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = client.Do(req)
	if err != nil {
		return "", notAnswering(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusCreated:
	case http.StatusUnauthorized:
		return "", fmt.Errorf("Chopin at %s did not accept the agent token in %s; is it using another config directory (CHOPIN_CONFIG_DIR)?", rec.Origin, configDir)
	default:
		return "", fmt.Errorf("Chopin at %s answered %s when asked for a sign-in link", rec.Origin, resp.Status)
	}
	var body struct {
		URL string `json:"url"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil {
		return "", fmt.Errorf("Chopin at %s sent a sign-in link that could not be read: %v", rec.Origin, err)
	}
	if !strings.HasPrefix(body.URL, rec.Origin+"/launch?") {
		return "", fmt.Errorf("Chopin at %s sent a sign-in link for somewhere else: %q", rec.Origin, body.URL)
	}
	return body.URL, nil
}

func (c *CLI) token(flags Flags, rotate bool) int {
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	if !rotate {
		token, err := LoadOrCreateAgentToken(cfg.ConfigDir)
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
			return exitError
		}
		fmt.Fprintln(c.Stdout, token)
		return exitOK
	}
	token, err := RotateAgentToken(cfg.ConfigDir)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	fmt.Fprintln(c.Stdout, token)
	fmt.Fprintln(c.Stderr, "The old agent token no longer works; a running Chopin closes the agent links that used it. Give your agents the new one.")
	return exitOK
}
