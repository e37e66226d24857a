package app

// Local is the server and the database as the commands use them inside
// their own process (cli.Local): chopin serve, the commands that start
// Chopin for the moment when none runs, and chopin backup of a data
// directory no Chopin runs in.

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/store"
)

// Local implements cli.Local with this package's server and the store.
type Local struct{}

// Serve builds the server (New), calls ready once it listens, and serves
// until ctx ends.
func (Local) Serve(ctx context.Context, cfg config.Config, logger *slog.Logger, ready func(origin string, launchURL func() string)) error {
	a, err := New(cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	ready(a.URL(), a.NewLaunchURL)
	return a.Run(ctx)
}

// Backup copies the database of dataDir, read-only and never migrated, so
// a database a newer Chopin wrote can be backed up too.
func (Local) Backup(ctx context.Context, dataDir, dest string) error {
	return store.BackupFile(ctx, filepath.Join(dataDir, databaseFile), dest)
}

// CheckBackup runs SQLite's integrity check on a copy.
func (Local) CheckBackup(ctx context.Context, path string) error {
	return store.CheckIntegrity(ctx, path)
}
