package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/modelserver"
	"github.com/chopin-desktop/chopin/version"
)

// The chopin command line: the table of commands, their flags and help,
// and the commands that start or find Chopin (the plain double-click,
// serve, open, token). main hands it the arguments.

// CLI runs chopin's commands. Its fields are what a command touches of the
// outside world, so tests can run commands in-process.
type CLI struct {
	Stdin          io.Reader // what `chopin mcp` forwards
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// OpenURL opens a link in the person's browser; OpenBrowser if nil.
	OpenURL func(url string) error
	// Local is Chopin's server inside this process, for chopin serve and
	// the commands that start one for the moment when none runs. main
	// sets it to the app's; cli never imports the server.
	Local Local
	// ACP is how chopin planner --acp starts its agent.
	ACP ACPOptions
	// ModelServers are where chopin planner looks for a model server when
	// none is named; modelserver.Usual if nil.
	ModelServers []modelserver.Server
}

// Local is what the commands need of Chopin's server and database inside
// this process.
type Local interface {
	// Serve runs a server on cfg until ctx ends. Once it listens it calls
	// ready, which must not block, with its origin and a maker of
	// one-time sign-in links. Another Chopin on the data directory is an
	// *instance.AlreadyRunningError.
	Serve(ctx context.Context, cfg config.Config, logger *slog.Logger, ready func(origin string, launchURL func() string)) error
	// Backup copies the database of a data directory no Chopin runs in to
	// dest, read-only and without migrating it.
	Backup(ctx context.Context, dataDir, dest string) error
	// CheckBackup runs SQLite's integrity check on a copy.
	CheckBackup(ctx context.Context, path string) error
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
  chopin status                   say whether Chopin runs, where it keeps its data, its last backup
  chopin backup FILE [--force]    write a checked copy of the database, even while Chopin runs
  chopin export DOCUMENT          write a document's plan as Markdown (-o FILE [--force], --decisions=inline)
  chopin import FILE              make a document from a Markdown file (--repository owner/name, --title)
  chopin desktop-entry            add Chopin, with its icon, to a Linux desktop's application menu
  chopin version                  print the version, commit and build date (also --version)

Run "chopin COMMAND --help" for a command's own flags.
` + globalFlagsText + environmentText

// The global flags and the environment, as --help lists them.
var (
	globalFlagsText = config.FlagsHelp()
	environmentText = config.EnvironmentHelp()
)

type command struct {
	name, usage string
	// setup registers the command's own flags and returns the command,
	// which reads them once they are parsed.
	setup func(fs *flag.FlagSet) (run func(ctx context.Context, c *CLI, flags config.Flags) int)
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
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
			fs.Bool("no-browser", true, "")
			return func(ctx context.Context, c *CLI, flags config.Flags) int { return c.start(ctx, flags, false) }
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
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
			printOnly := fs.Bool("print-url", false, "")
			signOut := fs.Bool("sign-out-everywhere", false, "")
			return func(ctx context.Context, c *CLI, flags config.Flags) int {
				cfg, ok := c.loadConfig(flags)
				if !ok {
					return exitError
				}
				if fs.NArg() > 1 {
					fmt.Fprintf(c.Stderr, "chopin open: one page at most, not %d\nRun \"%s\" for usage.\n", fs.NArg(), runCommand("open --help"))
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
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
			rotate := fs.Bool("rotate", false, "")
			return func(_ context.Context, c *CLI, flags config.Flags) int { return c.token(flags, *rotate) }
		},
	},
	{name: "planner", usage: plannerUsage, setup: setupPlanner, args: true},
	{name: "repo", usage: repoUsage, setup: setupRepo, args: true},
	{name: "mcp", usage: mcpUsage, setup: setupMCP},
	{name: "status", usage: statusUsage, setup: setupStatus},
	{name: "backup", usage: backupUsage, setup: setupBackup, args: true},
	{name: "export", usage: exportUsage, setup: setupExport, args: true},
	{name: "history", usage: historyUsage, setup: setupHistory, args: true},
	{name: "import", usage: importUsage, setup: setupImport, args: true},
	{name: "desktop-entry", usage: desktopEntryUsage, setup: setupDesktopEntry},
	{name: acpMCPCommand, usage: "Usage: chopin acp-mcp\n\nStarted by chopin planner --acp for its agent; not for people.\n", setup: setupACPMCP},
	{
		name:  "version",
		usage: "Usage: chopin version\n\nPrints the version of this chopin, the commit it was built from and when\n(also: chopin --version).\n",
		setup: func(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
			return func(_ context.Context, c *CLI, _ config.Flags) int {
				fmt.Fprintln(c.Stdout, version.Build())
				return exitOK
			}
		},
	},
}

// Run runs the command in args (without the program name) and returns the
// exit status: 0, 1 when the command failed, 2 for a usage mistake.
func (c *CLI) Run(ctx context.Context, args []string) int {
	var flags config.Flags
	top := c.flagSet("chopin", &flags)
	showVersion := top.Bool("version", false, "")
	if code, done := c.parse(top, args, usageText, "chopin --help"); done {
		return code
	}
	if *showVersion {
		fmt.Fprintln(c.Stdout, version.Build())
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
			fmt.Fprintf(c.Stderr, "chopin %s: unexpected argument %q\nRun \"%s\" for usage.\n", name, fs.Arg(0), runCommand(name+" --help"))
			return exitUsage
		}
		return run(ctx, c, flags)
	}
	fmt.Fprintf(c.Stderr, "chopin: unknown command %q\nRun \"%s\" for usage.\n", name, runCommand("--help"))
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
	fmt.Fprintf(c.Stderr, "chopin help: unknown command %q\nRun \"%s\" for usage.\n", args[0], runCommand("--help"))
	return exitUsage
}

// flagSet makes a flag set with the global flags, which every command
// accepts before or after its name.
func (c *CLI) flagSet(name string, flags *config.Flags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors in its own words
	config.RegisterFlags(fs, flags)
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

func (c *CLI) loadConfig(flags config.Flags) (config.Config, bool) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg, err := config.Load(flags, getenv)
	var bad *config.Error
	if errors.As(err, &bad) {
		fmt.Fprintln(c.Stderr, "chopin: cannot start, the configuration has problems:")
		for _, p := range bad.Problems {
			fmt.Fprintln(c.Stderr, "  "+p)
		}
		return config.Config{}, false
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return config.Config{}, false
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
func (c *CLI) start(ctx context.Context, flags config.Flags, browser bool) int {
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	if c.Local == nil {
		fmt.Fprintln(c.Stderr, "chopin: this chopin cannot start Chopin's server")
		return exitError
	}
	logger := slog.New(slog.NewTextHandler(c.Stderr, nil))
	err := c.Local.Serve(ctx, cfg, logger, func(origin string, launchURL func() string) {
		fmt.Fprintf(c.Stdout, "Chopin is running at %s. Press Ctrl+C to stop it.\n", origin)
		if !browser {
			return
		}
		link := launchURL()
		go func() {
			if err := c.openURL(link); err != nil {
				logger.Warn("could not open a browser", "err", err)
				fmt.Fprintf(c.Stdout, "Open this link in your browser to start (it works once, within 2 minutes):\n%s\nLater, run \"%s\" for a new one.\n", link, runCommand("open"))
			}
		}()
	})
	var running *instance.AlreadyRunningError
	switch {
	case errors.As(err, &running) && browser:
		return c.openRunning(ctx, cfg, false, "")
	case errors.As(err, &running):
		fmt.Fprintf(c.Stderr, "chopin: %v.\nRun \"%s\" to open it in the browser.\n", running, runCommand("open"))
		return exitError
	case err != nil:
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	return exitOK
}

// pagePath is the page chopin open lands on, as the launch link's next: a
// path, or the path of a whole address ("" for the repositories). The
// running Chopin keeps next on its own origin whatever it is; this refuses
// at once what it would refuse, so that no link is made that reads as
// another host: a path starting "//" (however many slashes, dots or
// percent-encodings), or holding a backslash or a control character.
func pagePath(arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	bad := fmt.Errorf("%q is not a page of Chopin: give its path, such as /documents/octo/plans/launch, or its address", arg)
	u, err := url.Parse(arg)
	if err != nil || (u.Scheme == "" && !strings.HasPrefix(arg, "/")) || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") {
		return "", bad
	}
	page := arg
	if u.Scheme != "" {
		page = u.RequestURI()
		if u.Fragment != "" {
			page += "#" + u.EscapedFragment()
		}
	}
	for i, layer := 0, page; ; i++ {
		if i == 8 || !plainPath(layer) {
			return "", bad
		}
		decoded, err := url.PathUnescape(layer)
		if err != nil {
			return "", bad
		}
		if decoded == layer {
			return page, nil
		}
		layer = decoded
	}
}

// plainPath reports s as a path that stays on the origin it is read
// against: one leading "/", no backslash, no control character, and no
// "//" at the start once "." and ".." segments are resolved.
func plainPath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.ContainsRune(s, '\\') ||
		strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return false
	}
	p, _, _ := strings.Cut(s, "?")
	p, _, _ = strings.Cut(p, "#")
	var segs []string
	for _, seg := range strings.Split(p, "/")[1:] {
		switch seg {
		case ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, seg)
		}
	}
	return len(segs) < 2 || segs[0] != ""
}

// openRunning gets a fresh sign-in link from the Chopin running with cfg's
// data directory, landing on page (a path, "" for the repositories), and
// opens it in the browser or, with printOnly, prints it.
func (c *CLI) openRunning(ctx context.Context, cfg config.Config, printOnly bool, page string) int {
	rec, err := waitForOrigin(ctx, cfg.DataDir)
	if errors.Is(err, instance.ErrNotRunning) {
		fmt.Fprintf(c.Stderr, "chopin: Chopin is not running (data directory %s).\nStart it with \"%s\".\n", cfg.DataDir, runCommand(""))
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

// signOutEverywhere ends every browser session, through the running
// Chopin or one started here for the moment.
func (c *CLI) signOutEverywhere(ctx context.Context, cfg config.Config) int {
	var out struct {
		SignedOut int64 `json:"signedOut"`
	}
	err := c.withAPI(ctx, cfg, func(api *client) error {
		return api.call(ctx, http.MethodPost, "/api/session/sign-out-everywhere", nil, &out)
	})
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	fmt.Fprintf(c.Stdout, "Signed out %d browser sessions. Run \"%s\" to sign this browser in again.\n", out.SignedOut, runCommand("open"))
	return exitOK
}

// requestLaunchURL asks the running instance for a one-time sign-in link,
// presenting the agent token of configDir. A Chopin that holds the lock but
// does not answer within answerTimeout is reported as such.
func requestLaunchURL(ctx context.Context, rec instance.Record, configDir string) (string, error) {
	api, err := newClient(rec, configDir)
	if err != nil {
		return "", err
	}
	api.http.Timeout = answerTimeout
	notAnswering := func(err error) error {
		return fmt.Errorf("Chopin is running (process %d) but does not answer at %s: %v\nIf it stays like this, quit it (or end process %d) and start Chopin again", rec.PID, rec.Origin, err, rec.PID)
	}
	if err := api.call(ctx, http.MethodGet, "/healthz", nil, nil); err != nil {
		return "", notAnswering(err)
	}
	var body struct {
		URL string `json:"url"`
	}
	err = api.call(ctx, http.MethodPost, "/api/launch-links", nil, &body)
	var refused *apiError
	switch {
	case errors.As(err, &refused) && refused.Status == http.StatusUnauthorized:
		return "", fmt.Errorf("Chopin at %s did not accept the agent token in %s; is it using another config directory (CHOPIN_CONFIG_DIR)?", rec.Origin, configDir)
	case errors.As(err, &refused):
		return "", fmt.Errorf("Chopin at %s answered %d when asked for a sign-in link: %s", rec.Origin, refused.Status, refused.Message)
	case err != nil:
		return "", notAnswering(err)
	}
	if !strings.HasPrefix(body.URL, rec.Origin+"/launch?") {
		return "", fmt.Errorf("Chopin at %s sent a sign-in link for somewhere else: %q", rec.Origin, body.URL)
	}
	return body.URL, nil
}

func (c *CLI) token(flags config.Flags, rotate bool) int {
	cfg, ok := c.loadConfig(flags)
	if !ok {
		return exitError
	}
	if !rotate {
		token, err := instance.LoadOrCreateAgentToken(cfg.ConfigDir)
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
			return exitError
		}
		fmt.Fprintln(c.Stdout, token)
		return exitOK
	}
	token, err := instance.RotateAgentToken(cfg.ConfigDir)
	if err != nil {
		fmt.Fprintf(c.Stderr, "chopin: %v\n", err)
		return exitError
	}
	fmt.Fprintln(c.Stdout, token)
	fmt.Fprintln(c.Stderr, "The old agent token no longer works; a running Chopin closes the agent links that used it. Give your agents the new one.")
	return exitOK
}
