package app

// GET /api/backup: a consistent copy of the database, made while Chopin
// runs (store.Backup: VACUUM INTO, then integrity_check), sent as a
// download. `chopin backup` and the UI's "Back up" link both use it. Only
// Chopin's own page or a script may ask (ownPage, in routes.go), and one
// backup is made at a time: each holds a whole copy of the database on
// disk until it is sent, so a second is refused while one is under way.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/labstack/echo/v4"
)

var errBackupInProgress = httpError(http.StatusConflict, "backup-in-progress",
	"A backup is already being made. Wait for it to finish, then try again.")

// backupStall is how long a backup's download may go without its reader
// taking anything before it is ended, so a stalled reader does not hold
// the one backup (and its copy on disk) for ever.
const backupStall = time.Minute

func (a *App) handleBackup(c echo.Context) error {
	if !a.backup.TryLock() {
		return errBackupInProgress
	}
	defer a.backup.Unlock()
	removeStaleBackups(a.cfg.DataDir)
	// The copy is made beside the database: same disk, same permissions.
	tmp, err := os.MkdirTemp(a.cfg.DataDir, "backup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "chopin.db")
	if err := a.store.Backup(c.Request().Context(), path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	name := "chopin-backup-" + info.ModTime().UTC().Format("20060102-150405") + ".db"
	h := c.Response().Header()
	h.Set("Content-Type", "application/vnd.sqlite3")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	h.Set("Cache-Control", "no-store")
	rc := http.NewResponseController(c.Response())
	defer rc.SetWriteDeadline(time.Time{})
	w := &progressWriter{ResponseWriter: c.Response(), rc: rc}
	http.ServeContent(w, c.Request(), "", info.ModTime(), f)
	// A HEAD (routed as a GET, headAsGet) or a range received no backup.
	if _, head := c.Response().Writer.(headWriter); !head && c.Response().Status == http.StatusOK && w.sent == info.Size() {
		a.recordBackup(time.Now())
	}
	return nil
}

// progressWriter gives each write backupStall to be taken, and counts
// what was sent: a backup is recorded only once all of it was.
type progressWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	sent int64
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(backupStall))
	n, err := w.ResponseWriter.Write(p)
	w.sent += int64(n)
	return n, err
}

// removeStaleBackups removes the temporary copies of backups that a Chopin
// which stopped mid-download left in the data directory.
func removeStaleBackups(dataDir string) {
	dirs, _ := filepath.Glob(filepath.Join(dataDir, "backup-*"))
	for _, dir := range dirs {
		if info, err := os.Stat(dir); err == nil && info.IsDir() && time.Since(info.ModTime()) > time.Hour {
			os.RemoveAll(dir)
		}
	}
}
