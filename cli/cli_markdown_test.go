package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// chopin import of a folder says so before anything starts.
func TestImportRefusesAFolder(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"CHOPIN_CONFIG_DIR": filepath.Join(dir, "config"), "CHOPIN_DATA_DIR": filepath.Join(dir, "data")}
	var stdout, stderr bytes.Buffer
	c := &CLI{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	code := c.Run(context.Background(), []string{"import", dir, "--repository", "acme/rocket"})
	want := "chopin import: " + dir + " is a directory, not a regular file; name a Markdown file\n"
	if code != 1 || stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("exit %d\nstderr: %q\nwant:   %q", code, &stderr, want)
	}
}

// --force without -o is a usage mistake, said as such.
func TestExportForceNeedsAFile(t *testing.T) {
	var stdout, stderr bytes.Buffer
	c := &CLI{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	code := c.Run(context.Background(), []string{"export", "acme/rocket/launch", "--force"})
	want := "chopin export: --force replaces the file that -o names; add -o FILE, or leave --force out\nRun \"chopin export --help\" for usage.\n"
	if code != 2 || stderr.String() != want {
		t.Errorf("exit %d\nstderr: %q\nwant:   %q", code, &stderr, want)
	}
}
