// Package app is Chopin's process and its HTTP server. The process shell:
// the settings table and the configuration it loads, the commands (serve,
// open, token, planner, version), the single instance and the local agent
// token. The server: it opens the store, builds the room hub, the Planner
// bridge (plannerhost) and the agent connection (agentconn) and plugs them
// together, and serves every route of routes.go, the browser socket and the
// embedded UI, turning every error into a status in one handler (errors.go).
//
// It is the only package that knows all the others; they know nothing of
// each other and state what they need as interfaces app implements, over
// the store, with compile-time checks.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/mcpserver"
	"github.com/chopin-desktop/chopin/modelserver"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// App is one running Chopin: its store, its listener and its HTTP server.
type App struct {
	cfg       config.Config
	log       *slog.Logger
	store     *store.Store
	instance  *instance.Lock
	listener  net.Listener
	conns     connLimits // what the server's connections may hold (connlimit.go); tests lower them before Run
	origin    string
	echo      *echo.Echo
	server    *http.Server
	hub       *room.Hub
	sockets   sockets                  // the browsers' room sockets
	agent     *agentconn.Server        // /api/v1/agent: the document's Planner
	planner   *plannerhost.Host        // the server's side of the Planner's turns
	mcp       func() *mcpserver.Server // /mcp: the local agent MCP tools, built on the first request
	describer *describer               // background jobs: documents' descriptions
	pruner    *historyPruner           // background: the plans' history to its retention

	agentToken *agentToken
	launches   launchTokens
	sessions   sync.Map     // cookie value -> struct{}: sessions seen valid
	signOuts   atomic.Int64 // sign-outs everywhere so far (see closeSignedOutSockets)
	backup     sync.Mutex   // held while a backup is made and sent: one at a time
	quit       quitSwitch   // POST /api/quit ends Run
	// modelServers replaces the model servers GET /api/model-servers asks
	// (modelservers.go) when set: tests give their own.
	modelServers atomic.Pointer[[]modelserver.Server]

	start     *startTrace    // the start's steps, logged once Run serves (startup.go)
	integrity integrityCheck // the database's check in the background (integrity.go)

	closeOnce sync.Once
	closeErr  error
}

// New opens the data directory, binds the listener and builds the server,
// but serves nothing until Run. A second process on the same data directory
// gets an *instance.AlreadyRunningError naming the running instance's origin.
func New(cfg config.Config, logger *slog.Logger) (*App, error) {
	trace := newStartTrace()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	// A folder Chopin ran in before has its lock file; its database must
	// be there (checked once the lock is held, so no other process is
	// creating it).
	usedBefore := instance.RanBefore(cfg.DataDir)
	inst, err := instance.Acquire(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if usedBefore {
		if err := databaseStillThere(cfg.DataDir); err != nil {
			inst.Release()
			return nil, err
		}
	}
	trace.step("lock")
	a := &App{cfg: cfg, log: logger, instance: inst, start: trace, integrity: defaultIntegrityCheck()}
	if err := a.open(); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// databaseStillThere refuses to start in a folder Chopin ran in before
// whose database is gone or empty: starting would make a new, empty one
// and the plans would look lost.
func databaseStillThere(dataDir string) error {
	fi, err := os.Stat(filepath.Join(dataDir, databaseFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &store.StartupError{Message: fmt.Sprintf("Chopin ran in %s before, but its database %s is missing. "+
			"Starting would begin an empty one, and your plans would look lost. Restore %s from a backup of the folder "+
			"and start Chopin again; to start afresh on purpose, move the folder aside (or set CHOPIN_DATA_DIR to a new one).",
			dataDir, databaseFile, databaseFile)}
	case err != nil:
		return fmt.Errorf("check the database: %w", err)
	case fi.Size() == 0 && !fileHasData(filepath.Join(dataDir, databaseFile+"-wal")):
		// (Beside a log that holds data, store.Open says so itself.)
		return &store.StartupError{Message: fmt.Sprintf("Chopin ran in %s before, but its database %s is empty (0 bytes). "+
			"Starting would begin an empty one, and your plans would look lost. Chopin has not changed it. Restore %s from a backup "+
			"of the folder and start Chopin again; to start afresh on purpose, move the folder aside (or set CHOPIN_DATA_DIR to a new one).",
			dataDir, databaseFile, databaseFile)}
	}
	return nil
}

func fileHasData(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}

// databaseFile is the database's name in the data folder.
const databaseFile = "chopin.db"

func (a *App) open() error {
	ctx := context.Background()
	var err error
	a.store, err = store.Open(ctx, filepath.Join(a.cfg.DataDir, databaseFile))
	if err != nil {
		return err
	}
	a.start.store = a.store.Opening()
	a.start.step("store")
	a.store.OnDamage(a.storageDamaged)
	// Sessions unused for 30 days are over; they go at every start.
	if n, err := a.store.PruneBrowserSessions(ctx); err != nil {
		return err
	} else if n > 0 {
		a.log.Info("pruned browser sessions unused for 30 days", "sessions", n)
	}
	for _, r := range a.cfg.Repositories {
		if _, err := a.store.EnsureRepository(ctx, r.Name, r.Path); errors.Is(err, store.ErrRemoved) {
			// Removed in the UI: it stays removed until added again there.
			a.log.Info("a repository the config names was removed; it stays removed", "repository", r.Name)
		} else if err != nil {
			return fmt.Errorf("repository %s from the config: %w", r.Name, err)
		}
	}
	a.start.step("sessions")
	a.agentToken, err = loadAgentToken(a.cfg.ConfigDir)
	if err != nil {
		return err
	}
	a.start.step("token")
	a.agentToken.onRotate = func(old string) {
		a.log.Info("agent token rotated")
		a.agentTokenRotated(old)
	}
	if err := a.listen(); err != nil {
		return err
	}
	a.start.step("listen")
	if err := a.instance.Record(a.origin); err != nil {
		return err
	}
	a.start.step("record")
	// The job runner exists before anything can attach a Planner (Restore
	// below already may), and starts once the links are restored.
	a.newJobs()
	a.startHistoryPruner()
	a.planner = a.newPlannerHost()
	a.hub = room.NewHub(room.Options{Persister: describedStore{roomStore{a.store}, a}, Comments: commentStore{a.store, a},
		Channels: roomCatalog{a}, Planner: a.planner, Logger: a.log,
		Attachments: room.AttachmentLimits{MaxBytes: a.cfg.ChatAttachmentMaxBytes, MaxTotal: a.cfg.ChatAttachmentMaxTotal}})
	a.agent = a.newAgentServer()
	a.planner.Plug(a.hub, a.agent)
	a.start.step("rooms")
	if err := a.agent.Restore(ctx); err != nil {
		return err
	}
	a.start.step("restore")
	a.describer.start()
	a.start.step("jobs")
	// Its tools' schemas take a while to build, and most runs never see
	// an MCP client: built when the first one comes, not at start.
	a.mcp = sync.OnceValue(a.newMCP)
	a.echo = a.newEcho()
	// Its deadlines and connection hooks are set in Run (serveConnections).
	a.server = &http.Server{
		Handler:  a.echo,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	a.start.step("http")
	return nil
}

// listen binds the configured loopback port. When another program holds it,
// Chopin takes a free port instead and says so (unless APP_ORIGIN pins the
// port, in which case starting elsewhere would break that origin).
func (a *App) listen() error {
	addr := net.JoinHostPort(a.cfg.ServerHost, strconv.Itoa(a.cfg.Port))
	l, err := net.Listen("tcp", addr)
	if err != nil && a.cfg.Port != 0 && a.cfg.AppOrigin == "" && errors.Is(err, errAddrInUse) {
		l, err = net.Listen("tcp", net.JoinHostPort(a.cfg.ServerHost, "0"))
		if err == nil {
			a.log.Warn("port in use by another program; using a free port instead",
				"wanted", a.cfg.Port, "port", l.Addr().(*net.TCPAddr).Port)
		}
	}
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	a.listener, a.conns = l, defaultConnLimits(raiseFileLimit())
	a.origin = a.cfg.AppOrigin
	if a.origin == "" {
		host := a.cfg.ServerHost
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		a.origin = "http://" + net.JoinHostPort(host, port)
	}
	return nil
}

// URL is the origin the app serves, such as http://127.0.0.1:8787.
func (a *App) URL() string { return a.origin }

// Store gives tests and commands access to the database.
func (a *App) Store() *store.Store { return a.store }

// config.Config is the configuration the app runs with, for tests that start it
// again on the same directories.
func (a *App) Config() config.Config { return a.cfg }

// AgentToken is the local agent token the app accepts now.
func (a *App) AgentToken() string {
	a.agentToken.mu.RLock()
	defer a.agentToken.mu.RUnlock()
	return a.agentToken.value
}

// Agent gives tests the agent connection server.
func (a *App) Agent() *agentconn.Server { return a.agent }

// Planner gives tests the server's side of the Planner.
func (a *App) Planner() *plannerhost.Host { return a.planner }

// Run serves until ctx is done, then shuts down: HTTP first, then the live
// connections (agent links, then browser sockets and rooms), then the store.
func (a *App) Run(ctx context.Context) error {
	ctx = a.quit.arm(ctx)
	errc := make(chan error, 1)
	// Logged before the first request can be answered: a test or the
	// harness that kills Chopin right after its first answer reads it.
	a.start.step("serve")
	a.start.log(a.log)
	go func() { errc <- a.server.Serve(a.serveConnections()) }()
	a.log.Info("chopin is serving", "origin", a.origin, "data", a.cfg.DataDir)
	a.startIntegrityCheck()
	stopTokenWatch := a.watchAgentToken()
	defer stopTokenWatch()

	select {
	case err := <-errc:
		a.Close()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.server.Shutdown(shutdownCtx); err != nil {
		a.log.Warn("http shutdown", "err", err)
	}
	return a.Close()
}

// Close releases everything in reverse order of opening. It is safe to call
// more than once and after Run.
func (a *App) Close() error {
	a.closeOnce.Do(func() {
		var errs []error
		if a.server != nil {
			errs = append(errs, ignoreClosed(a.server.Close()))
		} else if a.listener != nil {
			errs = append(errs, ignoreClosed(a.listener.Close()))
		}
		// A backup under way ends with its connection; its copy is removed
		// before the data directory is let go, and none starts after.
		a.backup.Lock()
		// A check of the database under way stops at its next step.
		a.stopIntegrityCheck()
		a.stopHistoryPruner()
		if a.describer != nil {
			// Background jobs stop first: an attempt under way stays
			// running in the store and starts again at the next launch.
			a.describer.close()
		}
		if a.agent != nil {
			// Links close with 1012 first: their turns end and their replies
			// are saved while the rooms and the store are still open.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := a.agent.Shutdown(ctx); err != nil {
				a.log.Warn("agent connections did not close in time", "err", err)
			}
			cancel()
			a.planner.Wait()
		}
		a.sockets.closeAll(websocket.CloseGoingAway, "Chopin is shutting down.")
		if a.hub != nil {
			a.hub.Close()
		}
		if a.store != nil {
			errs = append(errs, a.store.Close())
		}
		if a.instance != nil {
			errs = append(errs, a.instance.Release())
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
