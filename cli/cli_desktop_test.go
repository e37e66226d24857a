package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/assets"
)

// chopin desktop-entry writes the entry and the icon the UI serves as its
// favicon.
func TestDesktopEntry(t *testing.T) {
	data := t.TempDir()
	var stdout, stderr bytes.Buffer
	cli := &CLI{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		return map[string]string{"XDG_DATA_HOME": data}[k]
	}}
	if code := cli.Run(context.Background(), []string{"desktop-entry"}); code != 0 {
		t.Fatalf("exit %d: %s", code, &stderr)
	}
	icon := filepath.Join(data, "icons", "hicolor", "scalable", "apps", "chopin-desktop.svg")
	entry, err := os.ReadFile(filepath.Join(data, "applications", "chopin.desktop"))
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	for _, line := range []string{"[Desktop Entry]\n", "\nType=Application\n", "\nName=Chopin\n", "\nIcon=" + icon + "\n", "\nExec=\"" + exe + "\"\n"} {
		if !strings.Contains(string(entry), line) {
			t.Errorf("the entry lacks %q:\n%s", line, entry)
		}
	}
	if got, _ := os.ReadFile(icon); !bytes.Equal(got, assets.Icon) || !bytes.HasPrefix(got, []byte("<svg")) {
		t.Errorf("icon file holds %q", got)
	}

}

// Exec quotes a path with the characters the specification reserves.
func TestDesktopFileQuotesExec(t *testing.T) {
	got := desktopFile(`/opt/my "apps"/$HOME/100%/a\b`, "/i.svg")
	want := `Exec="/opt/my \\"apps\\"/\\$HOME/100%%/a\\\\b"` + "\n"
	if !strings.Contains(got, want) {
		t.Errorf("got\n%s\nwant a line %s", got, want)
	}
}

// The entry and the icon are readable by everyone (0644): the desktop reads
// them, and they hold nothing private. A link in the entry's place is left
// alone, not replaced and not written through.
func TestDesktopEntryFiles(t *testing.T) {
	data := t.TempDir()
	var stdout, stderr bytes.Buffer
	cli := &CLI{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		return map[string]string{"XDG_DATA_HOME": data}[k]
	}}
	if code := cli.Run(context.Background(), []string{"desktop-entry"}); code != 0 {
		t.Fatalf("exit %d: %s", code, &stderr)
	}
	entry := filepath.Join(data, "applications", "chopin.desktop")
	icon := filepath.Join(data, "icons", "hicolor", "scalable", "apps", "chopin-desktop.svg")
	if runtime.GOOS != "windows" {
		for _, path := range []string{entry, icon} {
			if fi, err := os.Stat(path); err != nil || fi.Mode() != 0o644 {
				t.Errorf("%s: %v, %v; want mode 0644", path, fi.Mode(), err)
			}
		}
	}

	// Run again: the files are replaced, as the command's help says.
	if code := cli.Run(context.Background(), []string{"desktop-entry"}); code != 0 {
		t.Fatalf("again: exit %d: %s", code, &stderr)
	}

	elsewhere := filepath.Join(t.TempDir(), "mine.desktop")
	os.WriteFile(elsewhere, []byte("mine\n"), 0o600)
	os.Remove(entry)
	if err := os.Symlink(elsewhere, entry); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	stdout.Reset()
	stderr.Reset()
	code := cli.Run(context.Background(), []string{"desktop-entry"})
	want := "chopin desktop-entry: " + entry + " is a symbolic link, not a regular file; chopin writes only a new file or over a regular one, so it left it alone\n"
	if code != 1 || stderr.String() != want {
		t.Errorf("over a link: exit %d\nstderr: %q\nwant:   %q", code, &stderr, want)
	}
	if fi, err := os.Lstat(entry); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("the link is now %v, %v", fi, err)
	}
	if got, _ := os.ReadFile(elsewhere); string(got) != "mine\n" {
		t.Errorf("the link's target now holds %q", got)
	}
}
