package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
