package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/store"
)

// chopin backup while edits stream in: the copy opens, passes
// integrity_check, and holds every edit acknowledged before the backup
// began. It is then restored as the README says (put in place of chopin.db)
// and Chopin starts on it.
func TestBackupWhileEditing(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	doc := ta.CreateDocument("acme/rocket", "Launch plan")

	var mu sync.Mutex
	acked := 0 // edits the server acknowledged
	var editErr error
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		source, revision := "# Launch plan\n", int64(0)
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			source += fmt.Sprintf("\nedit %d\n", n)
			body, _ := json.Marshal(map[string]any{"revision": revision, "source": source})
			req, _ := http.NewRequest("PUT", ta.URL()+"/api/channels/"+doc.ID+"/plan", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", ta.URL())
			resp, err := ta.Browser.Do(req)
			if err != nil {
				mu.Lock()
				editErr = err
				mu.Unlock()
				return
			}
			var plan struct{ Revision int64 }
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || json.Unmarshal(raw, &plan) != nil {
				mu.Lock()
				editErr = fmt.Errorf("edit %d: %d %s", n, resp.StatusCode, raw)
				mu.Unlock()
				return
			}
			revision = plan.Revision
			mu.Lock()
			acked = n
			mu.Unlock()
		}
	}()
	// Let some edits land, then back up while they keep coming.
	for {
		mu.Lock()
		n, err := acked, editErr
		mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if n >= 20 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	before := acked
	mu.Unlock()

	backup := filepath.Join(t.TempDir(), "chopin-backup.db")
	env := apptest.Env(dir)
	var stdout, stderr bytes.Buffer
	cli := &cli.CLI{Local: Local{}, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	code := cli.Run(context.Background(), []string{"backup", backup})
	mu.Lock()
	during := acked
	mu.Unlock()
	close(stop)
	<-done
	if editErr != nil {
		t.Fatal(editErr)
	}
	if code != 0 || !strings.Contains(stdout.String(), "through the running Chopin") {
		t.Fatalf("chopin backup: exit %d\nstdout: %s\nstderr: %s", code, &stdout, &stderr)
	}
	t.Logf("%d edits acknowledged before the backup began, %d by its end", before, during)
	checkPrivate(t, backup)
	if err := store.CheckIntegrity(context.Background(), backup); err != nil {
		t.Fatal(err)
	}

	// A second backup to the same file is refused without --force.
	stdout.Reset()
	stderr.Reset()
	if code := cli.Run(context.Background(), []string{"backup", backup}); code != 1 ||
		!strings.Contains(stderr.String(), "already exists; add --force to replace it") {
		t.Errorf("backup over an existing file: exit %d, stderr %q", code, &stderr)
	}
	ta.Stop()

	// Restore: put the backup in place of chopin.db and start Chopin on it.
	restored := t.TempDir()
	cfg := testConfig(t, restored)
	os.MkdirAll(cfg.DataDir, 0o700)
	raw, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cfg.DataDir, "chopin.db"), raw, 0o600)
	again := startAppWith(t, cfg)
	var plan struct{ Source string }
	again.Do("GET", "/api/channels/"+doc.ID+"/plan", nil).JSON(t, &plan)
	for n := 1; n <= before; n++ {
		if !strings.Contains(plan.Source, fmt.Sprintf("\nedit %d\n", n)) {
			t.Fatalf("the backup lacks edit %d, acknowledged before the backup began:\n%s", n, plan.Source)
		}
	}
}

// Without a running Chopin, chopin backup reads the data directory itself.
func TestBackupWhenNotRunning(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	doc := ta.CreateDocument("acme/rocket", "Kept while stopped")
	ta.Stop()

	backup := filepath.Join(t.TempDir(), "b.db")
	env := apptest.Env(dir)
	var stdout, stderr bytes.Buffer
	cli := &cli.CLI{Local: Local{}, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	if code := cli.Run(context.Background(), []string{"backup", backup}); code != 0 ||
		!strings.Contains(stdout.String(), "(Chopin is not running)") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, &stdout, &stderr)
	}
	checkPrivate(t, backup)
	s, err := store.Open(context.Background(), backup)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ch, err := s.Channel(context.Background(), doc.ID); err != nil || ch.Title != "Kept while stopped" {
		t.Errorf("the backup holds %+v, %v", ch, err)
	}
}
