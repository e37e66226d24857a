//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// chopin import of a named pipe, or of a link to one, refuses at once
// instead of waiting for a writer that may never come (and deaf to Ctrl+C
// while it waits).
func TestImportRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plan.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CHOPIN_CONFIG_DIR": filepath.Join(dir, "config"), "CHOPIN_DATA_DIR": filepath.Join(dir, "data")}
	for _, file := range []string{fifo, link} {
		var stdout, stderr bytes.Buffer
		c := &CLI{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- c.Run(ctx, []string{"import", file, "--repository", "acme/rocket"}) }()
		var code int
		select {
		case code = <-done:
		case <-time.After(15 * time.Second):
			// Blocked opening the pipe: end the command (Ctrl+C, then a
			// writer) so the test can report it.
			cancel()
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.Close()
			}
			<-done
			t.Fatalf("chopin import %s was still waiting for the pipe after 15s", file)
		}
		cancel()
		want := "chopin import: " + file + " is a named pipe (FIFO), not a regular file; name a Markdown file\n"
		if code != 1 || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("import %s: exit %d\nstderr: %q\nwant:   %q", file, code, &stderr, want)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the pipe is now %v, %v", fi, err)
	}
}
