package cli

// chopin backup FILE [--force]: a consistent copy of the database, through
// the running Chopin when there is one (GET /api/backup), else read
// directly from the data directory. The copy is written beside FILE under
// another name, checked with integrity_check, and only then given its name
// (writeNamedFile), so FILE is never a half-written copy; it is readable
// only by its owner, as the database is.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/instance"
)

const backupUsage = `Usage: chopin backup FILE [--force] [flags]

Writes a copy of Chopin's database to FILE, consistent even while Chopin
runs and people edit, and checks it with SQLite's integrity check. Through
the running Chopin when there is one, else straight from the data directory.

To restore a backup: quit Chopin, replace chopin.db in the data directory
with the backup (and delete chopin.db-wal and chopin.db-shm beside it, if
they are there), and start Chopin.

The copy is readable only by you (mode 0600), as the database is.

  --force          replace FILE if it exists; chopin never writes over a
                   link, a folder, a pipe or a device, even with --force
`

func setupBackup(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	force := fs.Bool("force", false, "")
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		if fs.NArg() != 1 {
			fmt.Fprintf(c.Stderr, "chopin backup: name the file to write, such as %s\nRun \"%s\" for usage.\n", runCommand("backup ~/chopin-backup.db"), runCommand("backup --help"))
			return exitUsage
		}
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		dest, err := filepath.Abs(fs.Arg(0))
		if err == nil {
			err = c.backup(ctx, cfg, dest, *force)
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin backup: %v\n", err)
			return exitError
		}
		return exitOK
	}
}

func (c *CLI) backup(ctx context.Context, cfg config.Config, dest string, force bool) error {
	if c.Local == nil {
		return errors.New("this chopin cannot read Chopin's database")
	}
	how := "through the running Chopin"
	err := writeNamedFile(dest, force, 0o600, func(partial string) error {
		api, err := runningClient(ctx, cfg)
		switch {
		case errors.Is(err, instance.ErrNotRunning):
			how = "from " + cfg.DataDir + " (Chopin is not running)"
			err = c.Local.Backup(ctx, cfg.DataDir, partial)
		case err == nil:
			err = api.download(ctx, "/api/backup", partial)
		}
		if err != nil {
			return err
		}
		return c.Local.CheckBackup(ctx, partial)
	})
	if err != nil {
		return err
	}
	info, err := os.Stat(dest)
	if err != nil {
		return err
	}
	if err := instance.RecordBackup(cfg.DataDir, instance.Backup{At: time.Now().UTC(), File: dest}); err != nil {
		fmt.Fprintf(c.Stderr, "chopin backup: the backup is good, but %v\n", err)
	}
	fmt.Fprintf(c.Stdout, "Backed up Chopin's database %s to %s (%d bytes); it passed SQLite's integrity check.\n"+
		"To restore it: quit Chopin, put it in place of %s, and start Chopin.\n",
		how, dest, info.Size(), filepath.Join(cfg.DataDir, "chopin.db"))
	return nil
}

// download writes the body of GET path to a new file at dest, readable
// only by this user.
func (api *client) download(ctx context.Context, path, dest string) error {
	resp, err := api.do(ctx, "GET", path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists", dest)
	}
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("copy the backup from Chopin at %s: %w", api.origin, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
