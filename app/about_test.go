package app

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
)

// GET /api/status says which Chopin runs and where it keeps things; a
// backup appears as the last one only once it was downloaded whole (a HEAD
// makes none a person holds).
func TestStatusSaysWhereAndTheLastBackup(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	ta := startAppWith(t, cfg)

	var s statusJSON
	r := ta.Do("GET", "/api/status", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &s)
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if s.DataDir != cfg.DataDir || s.ConfigDir != cfg.ConfigDir || s.Binary != exe || s.Command == "" || s.Version == "" || s.Origin != ta.URL() || s.PID != os.Getpid() {
		t.Fatalf("status = %+v", s)
	}
	if s.Database.Path != filepath.Join(cfg.DataDir, "chopin.db") || s.Database.Bytes <= 0 {
		t.Fatalf("database = %+v", s.Database)
	}
	if s.LastBackup != nil {
		t.Fatalf("a fresh Chopin has a last backup: %+v", s.LastBackup)
	}

	apptest.Want(t, ta.Do("HEAD", "/api/backup", nil), 200, "")
	r = ta.Do("GET", "/api/status", nil)
	r.JSON(t, &s)
	if s.LastBackup != nil {
		t.Fatalf("a HEAD of /api/backup was recorded as a backup: %+v", s.LastBackup)
	}

	before := time.Now().Add(-time.Second)
	r = ta.Do("GET", "/api/backup", nil)
	apptest.Want(t, r, 200, "")
	if len(r.Body) == 0 {
		t.Fatal("empty backup")
	}
	ta.Do("GET", "/api/status", nil).JSON(t, &s)
	if s.LastBackup == nil || s.LastBackup.At.Before(before) || s.LastBackup.File != "" {
		t.Fatalf("last backup after a download = %+v", s.LastBackup)
	}
	// A script reads it too.
	apptest.Want(t, ta.Request(http.DefaultClient, "GET", "/api/status", nil, map[string]string{"Authorization": "Bearer " + ta.Token()}), 200, "")
}

// POST /api/quit: refused to anything but Chopin's own page (or a script),
// then, from the page, answered and Chopin stops: its tabs' sockets close
// and it stops answering.
func TestQuitFromOwnPageOnly(t *testing.T) {
	ta, _, room := startWithLaunch(t)
	for _, h := range []map[string]string{
		{},                               // a browser without Origin
		{"Origin": "http://127.0.0.1:1"}, // another page
		{"Origin": ta.URL(), "Sec-Fetch-Site": "same-site"},
	} {
		apptest.Want(t, ta.Request(ta.Browser, "POST", "/api/quit", nil, h), 403, "forbidden-origin")
	}
	apptest.Want(t, ta.Do("GET", "/api/status", nil), 200, "")

	r := ta.Request(ta.Browser, "POST", "/api/quit", nil, map[string]string{"Origin": ta.URL(), "Sec-Fetch-Site": "same-origin"})
	apptest.Want(t, r, 202, "")
	if code, reason := room.CloseCode(); code != 1001 || reason != "Chopin is shutting down." {
		t.Fatalf("the tab's socket closed with %d %q", code, reason)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(ta.URL() + "/healthz")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("Chopin still answers 30 s after Quit")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chopin status: through the running Chopin's API, what the About page
// shows, the backup chopin backup wrote included; with none running, it
// says so and exits 1.
func TestStatusCommand(t *testing.T) {
	dir := t.TempDir()
	env := apptest.Env(dir)
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		c := &cli.CLI{Local: Local{}, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
		return c.Run(context.Background(), args), stdout.String(), stderr.String()
	}
	cfg := testConfig(t, dir)
	if code, out, _ := run("status"); code != 1 || !strings.HasPrefix(out, "Chopin is not running (data directory "+cfg.DataDir+").\nStart it with ") {
		t.Fatalf("status with none running: exit %d, %q", code, out)
	}

	ta := startAppWith(t, cfg)
	code, out, errs := run("status")
	if code != 0 || !strings.Contains(out, "Chopin is running at "+ta.URL()) || !strings.Contains(out, "Data:         "+cfg.DataDir+"\n") ||
		!strings.Contains(out, "Config:       "+cfg.ConfigDir+"\n") || !strings.Contains(out, filepath.Join(cfg.DataDir, "chopin.db")+", ") ||
		!strings.Contains(out, "Last backup:  never") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errs)
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if code, out, errs := run("backup", backup); code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs = run("status"); code != 0 || !strings.Contains(out, "ago, to "+backup+"\n") {
		t.Fatalf("status after a backup: exit %d\n%s%s", code, out, errs)
	}
}
