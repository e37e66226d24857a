package acp

// The bridge's configuration and one document's link: Serve attaches to a
// document as its Planner, starts the document's agent process, and keeps
// the link attached (resuming what it kept) until its context ends.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Config is what a Bridge runs with.
type Config struct {
	Name    string   // how messages name the agent: a preset's name, or its command
	Command []string // the agent's command line
	// Env is the agent's environment; nil inherits the planner's.
	Env []string
	// Version is this build's version (chopin --version's), which the
	// bridge gives as its clientInfo and its MCP server's serverInfo.
	Version string
	// DataDir holds a folder per document (the agent's working directory
	// when the repository has no checkout) and the ACP session ids kept
	// for session/load.
	DataDir string
	// Checkout returns the local checkout of a repository (owner/name), or
	// "" when none is registered.
	Checkout func(ctx context.Context, repository string) string
	// MCPStdio is the command line of the stdio entry offered to an agent
	// that cannot reach an MCP server over HTTP: the chopin binary and its
	// hidden subcommand. The bridge adds the variables it needs.
	MCPStdio []string
	// InitializeTimeout bounds the wait for initialize's answer;
	// DefaultInitializeTimeout if zero.
	InitializeTimeout time.Duration
	Logger            *slog.Logger
	// Notify receives lines for the person running the bridge; Problem
	// the lines that say something went wrong (the planner's stderr).
	Notify  func(line string)
	Problem func(line string)
	// Backoff is the wait before attaching again after the n-th failure in
	// a row; nil is 1 s doubling to 30 s.
	Backoff func(n int) time.Duration
}

// Bridge serves documents' turns with an ACP agent, one process each.
type Bridge struct {
	cfg     Config
	log     *slog.Logger
	notify  func(string)
	problem func(string)
}

// New returns a Bridge for cfg's agent.
func New(cfg Config) (*Bridge, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("no agent command is given")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("no data directory is given")
	}
	if cfg.Name == "" {
		cfg.Name = strings.Join(cfg.Command, " ")
	}
	if cfg.InitializeTimeout <= 0 {
		cfg.InitializeTimeout = DefaultInitializeTimeout
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	b := &Bridge{cfg: cfg, log: cfg.Logger, notify: cfg.Notify, problem: cfg.Problem}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.notify == nil {
		b.notify = func(string) {}
	}
	if b.problem == nil {
		b.problem = b.notify
	}
	return b, nil
}

// Target is one document for the bridge to serve.
type Target struct {
	Document string // its id or Chopin URL
	Token    string // the agent token; never logged
	// Endpoint returns the agent connection's URL, asked before every
	// attempt.
	Endpoint func() (string, error)
}

// detachTimeout bounds the wait for Chopin to confirm a detach.
const detachTimeout = 3 * time.Second

// features are the optional features the bridge asks for; see docs/acp.md.
var features = []string{
	wire.FeatureCapabilityCatalog, wire.FeatureAttachments, wire.FeatureRunStageDeltas,
	wire.FeatureResumableSessions, wire.FeatureRestartNotice,
}

// Serve attaches to tgt's document and serves its turns with the agent until
// ctx ends. A dropped link is attached again after a backoff while the agent
// process and its ACP session live on; a refusal ends Serve with an error.
func (b *Bridge) Serve(ctx context.Context, tgt Target) error {
	d := &document{b: b, log: b.log}
	defer d.close()
	var held *client.Resumption
	attachedOnce, failures := false, 0
	for ctx.Err() == nil {
		endpoint, err := tgt.Endpoint()
		var link *client.Link
		if err == nil {
			link, err = client.Dial(ctx, client.Config{URL: endpoint, Token: tgt.Token, Document: tgt.Document,
				Features: features, Handler: d.handler(), Logger: b.log, Resume: held})
		}
		if ctx.Err() != nil {
			if link != nil {
				_ = link.Close()
			}
			return nil
		}
		if err != nil {
			var rf *client.Refusal
			var he *client.HTTPError
			if (errors.As(err, &rf) && rf.Code != "unavailable") || errors.As(err, &he) || !attachedOnce {
				return fmt.Errorf("%s: %w", tgt.Document, err)
			}
			failures++
			wait := client.RetryDelay(held, false, 0, b.wait(failures))
			b.notify(fmt.Sprintf("%s: %v Trying again in %s.", tgt.Document, err, wait))
			if !client.Sleep(ctx, wait) {
				return nil
			}
			continue
		}
		attachedOnce, failures, held = true, 0, nil
		d.attached(ctx, link)
		select {
		case <-ctx.Done():
			// The agent stops while the link detaches, so that the planner
			// exits within seconds whatever either takes.
			stopped := make(chan struct{})
			go func() { d.close(); close(stopped) }()
			dctx, cancel := context.WithTimeout(context.Background(), detachTimeout)
			_ = link.Detach(dctx)
			cancel()
			<-stopped
			b.notify(fmt.Sprintf("Detached from %q.", link.Attached().Document.Title))
			return nil
		case <-link.Done():
		}
		ce := link.Err()
		if ce != nil && ce.Refused != nil && ce.Refused.Code != "unavailable" {
			return fmt.Errorf("%s: Chopin let this Planner go (%s): %s", tgt.Document, ce.Refused.Code, ce.Refused.Message)
		}
		held = link.Resumption()
		wait := time.Duration(0)
		if ce == nil || ce.Code != 1012 {
			failures++
			wait = b.wait(failures)
		}
		b.notify(fmt.Sprintf("The link to %q dropped; attaching again in %s. The agent keeps running.", link.Attached().Document.Title, wait))
		if !client.Sleep(ctx, wait) {
			return nil
		}
	}
	return nil
}

func (b *Bridge) wait(failures int) time.Duration {
	if b.cfg.Backoff != nil {
		return b.cfg.Backoff(failures)
	}
	return client.Backoff(failures)
}

// document is one attached document and its agent.
type document struct {
	// set at construction
	b *Bridge

	// start serialises starting the process and opening the session.
	start sync.Mutex

	mu  sync.Mutex   // guards the fields below
	log *slog.Logger // names the channel once attached; read with logger()
	// id, title and repository are the attached document's.
	id, title, repository string
	link                  *client.Link
	proc                  *process
	closed                bool          // the bridge stopped serving the document: no agent starts again
	session               sdk.SessionId // the ACP session of proc; "" before the first turn
	cwd                   string        // the session's working directory
	model                 string        // the session's current model
	modelByConfig         string        // the config option id that chooses the model, if any
	turn                  *turnState    // the running turn
	tools                 []wire.Tool   // the latest turn's host tools
	mcp                   *mcpEndpoint
	catalog               catalogState
	// isolated are the ACP sessions of Chopin's isolated sessions, by
	// Chopin's session id (isolated.go); never the document's session.
	isolated map[string]*isolatedSession
	// always holds the options a person chose "always" for, by session,
	// kind and title (permission.go); forgotten with the process.
	always map[string]sdk.PermissionOptionId
}

func (d *document) handler() client.Handler {
	return client.Handler{Turn: d.runTurn, Destroyed: d.destroyed}
}

// attached records a new link and starts the agent when none runs, so a
// missing or broken agent is said at once.
func (d *document) attached(ctx context.Context, link *client.Link) {
	doc := link.Attached().Document
	d.mu.Lock()
	again := d.link != nil
	d.link, d.id, d.title, d.repository = link, doc.ID, doc.Title, doc.Repository
	d.catalog.sent = "" // a new link has no catalog yet
	d.log = d.b.log.With("channel", doc.ID)
	d.mu.Unlock()
	name := doc.URL
	if name == "" {
		name = doc.ID
	}
	word := ""
	if again {
		word = " again"
	}
	d.b.notify(fmt.Sprintf("Attached%s to %q (%s) as its Planner, with the agent %s.", word, doc.Title, name, d.b.cfg.Name))
	if _, err := d.ensureProcess(ctx); err != nil {
		d.b.problem(fmt.Sprintf("%s: %v The next @chopin tries again.", doc.Title, err))
		return
	}
	d.reportCatalog()
}

// ensureProcess returns the running agent, starting one when none runs or
// the last one ended.
func (d *document) ensureProcess(ctx context.Context) (*process, error) {
	d.start.Lock()
	defer d.start.Unlock()
	d.mu.Lock()
	p, closed := d.proc, d.closed
	d.mu.Unlock()
	if closed {
		return nil, &ProcessError{Message: "The planner is stopping."}
	}
	if p != nil && !p.hasExited() {
		return p, nil
	}
	if p != nil {
		d.forgetProcess(p)
	}
	// The agent runs in the folder its session works in, as the help says.
	dir, err := d.workingDirectory(ctx)
	if err != nil {
		return nil, &ProcessError{Err: err, Message: fmt.Sprintf("The agent's working directory could not be made: %v.", err)}
	}
	ac := agentCommand{args: d.b.cfg.Command, dir: dir, env: d.b.cfg.Env}
	p, err = startProcess(ctx, d.b.cfg.Name, d.b.cfg.Version, ac, &agentClient{d: d}, d.b.cfg.InitializeTimeout, d.logger())
	if err != nil {
		d.logger().Warn("agent did not start", "err", err)
		return nil, err
	}
	d.mu.Lock()
	closed = d.closed
	if !closed {
		d.proc = p
	}
	d.mu.Unlock()
	if closed {
		p.stop()
		return nil, &ProcessError{Message: "The planner is stopping."}
	}
	d.logger().Info("agent started", "agent", d.b.cfg.Name, "loadSession", p.init.AgentCapabilities.LoadSession,
		"mcpHTTP", p.init.AgentCapabilities.McpCapabilities.Http)
	return p, nil
}

// forgetProcess drops p and its session, when p is still the document's,
// and ends what p left running of its process group.
func (d *document) forgetProcess(p *process) {
	go p.stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.proc == p {
		d.proc, d.session, d.model, d.modelByConfig, d.always = nil, "", "", "", nil
	}
	for id, is := range d.isolated {
		if is.proc == p {
			delete(d.isolated, id)
		}
	}
}

// close stops the agent with everything it started, and the MCP server.
func (d *document) close() {
	d.mu.Lock()
	p, m := d.proc, d.mcp
	d.proc, d.mcp, d.closed = nil, nil, true
	d.mu.Unlock()
	if p != nil {
		p.stop()
	}
	if m != nil {
		m.close()
	}
}

// workingDirectory is the session's cwd: the repository's checkout when one
// is registered, else a folder of the document's own under the data
// directory.
func (d *document) workingDirectory(ctx context.Context) (string, error) {
	d.mu.Lock()
	repo, id := d.repository, d.id
	d.mu.Unlock()
	if f := d.b.cfg.Checkout; f != nil && repo != "" {
		if dir := f(ctx, repo); dir != "" {
			if abs, err := filepath.Abs(dir); err == nil {
				return abs, nil
			}
		}
	}
	dir := filepath.Join(d.b.cfg.DataDir, "acp", "documents", url.PathEscape(id))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.Abs(dir)
}

// logger is the document's logger, which names its channel once attached.
func (d *document) logger() *slog.Logger {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log
}
