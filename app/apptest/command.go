package apptest

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"
)

// A chopin subcommand run in-process against the app's data and config
// directories, as a person on the same computer would run it.

// Command is a running subcommand and what it wrote.
type Command struct {
	Stdout, Stderr *Buffer
	code           chan int
	cancel         context.CancelFunc
}

// Buffer is output a command writes while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// StartCommand runs run, which returns the exit code, until it returns or
// is interrupted by Interrupt or the end of the test.
func StartCommand(t testing.TB, name string, run func(ctx context.Context, stdout, stderr io.Writer) int) *Command {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Command{Stdout: &Buffer{}, Stderr: &Buffer{}, code: make(chan int, 1), cancel: cancel}
	go func() { c.code <- run(ctx, c.Stdout, c.Stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-c.code:
			c.code <- code
		case <-time.After(Wait):
			t.Error(name + " did not stop")
		}
	})
	return c
}

// Interrupt stops the command as Ctrl+C does.
func (c *Command) Interrupt() { c.cancel() }

// Wait waits for the command to exit and returns its exit code.
func (c *Command) Wait(t testing.TB, name string) int {
	t.Helper()
	select {
	case code := <-c.code:
		c.code <- code
		return code
	case <-time.After(Wait):
		t.Fatalf("%s did not exit; stdout:\n%s\nstderr:\n%s", name, c.Stdout, c.Stderr)
		return 0
	}
}
