// Command chopin is Chopin desktop: it serves the web UI on this computer and
// keeps every document in one SQLite database. Run "chopin --help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/chopin-desktop/chopin/app"
	"github.com/chopin-desktop/chopin/cli"
)

func main() {
	cli.AttachParentConsole() // Windows: print to the terminal chopin.exe was started from, if any
	limitMemory()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &cli.CLI{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Local: app.Local{}}
	code := c.Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
