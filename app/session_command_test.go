package app

// The texts name the binary a person can run: "chopin" when the PATH's
// chopin is this one, else its full path.

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSessionNamesTheRunningBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	t.Setenv("PATH", t.TempDir())
	ta := startApp(t)
	var s struct{ Command string }
	ta.Do("GET", "/api/session", nil).JSON(t, &s)
	if s.Command != exe {
		t.Errorf("with no chopin on the PATH the command is %q, want %q", s.Command, exe)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "chopin")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	ta.Do("GET", "/api/session", nil).JSON(t, &s)
	if s.Command != "chopin" {
		t.Errorf("with this chopin on the PATH the command is %q", s.Command)
	}
}

// chopinOnPath puts this test binary on the PATH as "chopin".
func chopinOnPath(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "chopin")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}
