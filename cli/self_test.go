package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The messages that send a person to a chopin command name this very
// binary: "chopin" when the PATH's chopin is it, else its full path (after
// go run, or a go build that left ./chopin in a checkout).
func TestMessagesNameTheRunningBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a link on the PATH stands for the binary on Unix")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	run := func(args ...string) string {
		env := map[string]string{"CHOPIN_CONFIG_DIR": t.TempDir(), "CHOPIN_DATA_DIR": t.TempDir()}
		var stdout, stderr bytes.Buffer
		c := &CLI{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
		c.Run(context.Background(), args)
		return stdout.String() + stderr.String()
	}
	cases := []struct {
		args []string
		want string // with %s for the command
	}{
		{[]string{"open"}, "Start it with \"%s\"."},
		{[]string{"status"}, "Start it with %s.\n"},
		{[]string{"backup"}, "Run \"%s backup --help\" for usage."},
		{[]string{"nonesuch"}, "Run \"%s --help\" for usage."},
		{[]string{"repo", "remove"}, "Run \"%s repo --help\" for usage."},
	}
	check := func(command string) {
		t.Helper()
		for _, tc := range cases {
			want := strings.ReplaceAll(tc.want, "%s", command)
			if got := run(tc.args...); !strings.Contains(got, want) {
				t.Errorf("chopin %s with chopin=%s said\n%s\nwant it to say %q", strings.Join(tc.args, " "), command, got, want)
			}
		}
	}

	t.Setenv("PATH", t.TempDir()) // no chopin on the PATH
	check(exe)

	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "chopin")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin) // this binary is the PATH's chopin
	check("chopin")

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "chopin"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", other) // another chopin is
	check(exe)
}
