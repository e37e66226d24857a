package app

// GET /api/backup: a consistent copy of the database, made while Chopin
// runs (store.Backup: VACUUM INTO, then integrity_check), sent as a
// download. `chopin backup` and the UI's "Back up" link both use it.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/labstack/echo/v4"
)

func (a *App) handleBackup(c echo.Context) error {
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
	http.ServeContent(c.Response(), c.Request(), "", info.ModTime(), f)
	return nil
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
