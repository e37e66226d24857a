package cli

// chopin status: what the About page shows, from the running Chopin (GET
// /api/status): its version, where it serves, its binary, its data and
// config directories, the database's size and the last backup. With no
// Chopin running it says so and exits 1.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/instance"
)

const statusUsage = `Usage: chopin status [flags]

Says whether Chopin is running and, if it is, where: its version, its
address, the program running, its data and config directories, the size of
its database and when it was last backed up. Exits 1 when Chopin is not
running.
`

// statusReply is what chopin status reads of GET /api/status.
type statusReply struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Origin    string `json:"origin"`
	PID       int    `json:"pid"`
	Binary    string `json:"binary"`
	DataDir   string `json:"dataDir"`
	ConfigDir string `json:"configDir"`
	Database  struct {
		Path  string `json:"path"`
		Bytes int64  `json:"bytes"`
	} `json:"database"`
	LastBackup *instance.Backup `json:"lastBackup"`
}

func setupStatus(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	return func(ctx context.Context, c *CLI, flags config.Flags) int {
		cfg, ok := c.loadConfig(flags)
		if !ok {
			return exitError
		}
		var s statusReply
		api, err := runningClient(ctx, cfg)
		if err == nil {
			err = api.call(ctx, http.MethodGet, "/api/status", nil, &s)
		}
		if errors.Is(err, instance.ErrNotRunning) {
			fmt.Fprintf(c.Stdout, "Chopin is not running (data directory %s).\nStart it with %s.\n", cfg.DataDir, runCommand(""))
			return exitError
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "chopin status: %v\n", err)
			return exitError
		}
		fmt.Fprint(c.Stdout, s.text(time.Now()))
		return exitOK
	}
}

// text is the status as chopin status prints it.
func (s statusReply) text(now time.Time) string {
	version := s.Version
	if s.Commit != "" {
		version += " (" + s.Commit + ")"
	}
	backup := "never (run " + runCommand("backup FILE") + ", or Download a backup on the About page)"
	if b := s.LastBackup; b != nil {
		backup = b.At.Local().Format("2006-01-02 15:04") + ", " + age(now.Sub(b.At)) + " ago"
		if b.File != "" {
			backup += ", to " + b.File
		}
	}
	return fmt.Sprintf("Chopin is running at %s (process %d).\n"+
		"  Version:      %s\n"+
		"  Program:      %s\n"+
		"  Data:         %s\n"+
		"  Config:       %s\n"+
		"  Database:     %s, %s\n"+
		"  Last backup:  %s\n",
		s.Origin, s.PID, version, s.Binary, s.DataDir, s.ConfigDir, s.Database.Path, size(s.Database.Bytes), backup)
}

// size is a byte count as a person reads it.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
}

// age is a duration as a person reads it, to its largest unit.
func age(d time.Duration) string {
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}
