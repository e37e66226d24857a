package app

// The About page's facts and its Quit (docs/http-api.md, "Service"): GET
// /api/status says which Chopin this is and where it keeps things, for the
// About page and `chopin status`; POST /api/quit ends this Chopin the way
// Ctrl+C does (Run's graceful shutdown), for a person whose Chopin has no
// terminal to press Ctrl+C in.

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/instance"
	"github.com/chopin-desktop/chopin/version"
)

// statusJSON is GET /api/status.
type statusJSON struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	BuildDate string `json:"buildDate,omitempty"`
	Origin    string `json:"origin"`
	PID       int    `json:"pid"`
	// Binary is the running program's full path; Command is how a
	// terminal runs it ("chopin" when that is on the PATH and is it).
	Binary    string `json:"binary"`
	Command   string `json:"command"`
	DataDir   string `json:"dataDir"`
	ConfigDir string `json:"configDir"`
	Database  struct {
		Path  string `json:"path"`
		Bytes int64  `json:"bytes"` // the database and its write-ahead log
	} `json:"database"`
	LastBackup *instance.Backup `json:"lastBackup"` // null when none is recorded
}

func (a *App) handleStatus(c echo.Context) error {
	b := version.Build()
	s := statusJSON{
		Version: b.Version, Commit: b.Commit, BuildDate: b.Date,
		Origin: a.origin, PID: os.Getpid(),
		Binary: executable(), Command: selfCommand(),
		DataDir: a.cfg.DataDir, ConfigDir: a.cfg.ConfigDir,
	}
	s.Database.Path = filepath.Join(a.cfg.DataDir, databaseFile)
	for _, p := range []string{s.Database.Path, s.Database.Path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			s.Database.Bytes += fi.Size()
		}
	}
	if last, ok, err := instance.LastBackup(a.cfg.DataDir); err != nil {
		a.log.Warn("read the last backup's record", "err", err)
	} else if ok {
		s.LastBackup = &last
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, s)
}

// executable is the running program's full path, links resolved.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		return r
	}
	return exe
}

// recordBackup notes a backup that was sent whole.
func (a *App) recordBackup(at time.Time) {
	if err := instance.RecordBackup(a.cfg.DataDir, instance.Backup{At: at.UTC()}); err != nil {
		a.log.Warn("record the backup", "err", err)
	}
}

// handleQuit answers, then ends Run as an interrupt would: the answer is
// sent before the server shuts down (Shutdown waits for it), and the open
// tabs' sockets close with "Chopin is shutting down.".
func (a *App) handleQuit(c echo.Context) error {
	a.quit.pull()
	a.log.Info("quit asked for over HTTP")
	return c.JSON(http.StatusAccepted, map[string]bool{"stopping": true})
}

// quitSwitch ends Run from a request. Run arms it with its context before
// it serves, so every request finds it armed.
type quitSwitch struct {
	mu     sync.Mutex
	cancel context.CancelFunc // guarded by mu; nil until Run arms it
}

// arm returns the context Run serves under, which pull ends.
func (q *quitSwitch) arm(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	q.mu.Lock()
	q.cancel = cancel
	q.mu.Unlock()
	return ctx
}

func (q *quitSwitch) pull() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cancel != nil {
		q.cancel()
	}
}
