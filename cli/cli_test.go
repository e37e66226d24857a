package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/instance"
)

// A Chopin that holds the lock but does not answer is reported as such,
// with what to do, and the command fails.
func TestCLIOpenWhenTheRunningChopinDoesNotAnswer(t *testing.T) {
	configDir, dataDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(configDir, "chopin.toml"), []byte("[account]\nlogin = \"ada\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := instance.LoadOrCreateAgentToken(configDir); err != nil {
		t.Fatal(err)
	}
	// A port nothing listens on any more.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origin := "http://" + l.Addr().String()
	l.Close()
	inst, err := instance.Acquire(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Release()
	if err := inst.Record(origin); err != nil {
		t.Fatal(err)
	}

	env := map[string]string{"CHOPIN_CONFIG_DIR": configDir, "CHOPIN_DATA_DIR": dataDir}
	var stdout, stderr bytes.Buffer
	var opened []string
	cli := &CLI{
		Stdout: &stdout, Stderr: &stderr,
		Getenv:  func(k string) string { return env[k] },
		OpenURL: func(u string) error { opened = append(opened, u); return nil },
	}
	code := cli.Run(context.Background(), []string{"open"})
	want := fmt.Sprintf("chopin: Chopin is running (process %d) but does not answer at %s: ", os.Getpid(), origin)
	if code != 1 || !strings.HasPrefix(stderr.String(), want) ||
		!strings.Contains(stderr.String(), fmt.Sprintf("If it stays like this, quit it (or end process %d) and start Chopin again", os.Getpid())) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and a message starting %q", code, &stderr, want)
	}
	if stdout.Len() != 0 || len(opened) != 0 {
		t.Errorf("printed %q and opened %q, want nothing", &stdout, opened)
	}
}

// The token is sent only to this computer, whatever the record says.
func TestCLINeverSendsTheTokenElsewhere(t *testing.T) {
	configDir := t.TempDir()
	instance.LoadOrCreateAgentToken(configDir)
	for _, origin := range []string{"http://example.com:8787", "file:///etc/passwd", "http://10.0.0.1:8787"} {
		_, err := requestLaunchURL(context.Background(), instance.Record{Origin: origin, PID: 7}, configDir)
		want := fmt.Sprintf("the running Chopin (process 7) recorded %q, which is not a loopback address; quit it and start Chopin again", origin)
		if err == nil || err.Error() != want {
			t.Errorf("origin %s: err = %v, want %q", origin, err, want)
		}
	}
}

func TestCLIBrowserCommands(t *testing.T) {
	const link = "http://127.0.0.1:8787/launch?token=abc"
	sep := string(os.PathListSeparator)
	got := browserCommands(link, "firefox --new-window"+sep+sep+"lynx %s -dump"+sep+"  ")
	want := [][]string{
		{"firefox", "--new-window", link},
		{"lynx", link, "-dump"},
	}
	if !reflect.DeepEqual(got[:2], want) || len(got) != 3 {
		t.Errorf("browserCommands = %q, want %q and then the platform's opener", got, want)
	}
	if last := got[len(got)-1]; last[len(last)-1] != link {
		t.Errorf("the platform's opener %q does not get the link", last)
	}
}

func TestCLIOpenBrowserReportsFailure(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir) // no xdg-open, open or rundll32 to fall back on
	t.Setenv("BROWSER", filepath.Join(dir, "no-such-browser"))
	if err := OpenBrowser("http://127.0.0.1:1/"); err == nil {
		t.Error("OpenBrowser with no browser at all succeeded")
	}
}
