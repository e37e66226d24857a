package main

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A damaged or missing database stops start-up with what to do, and
// Chopin changes nothing: it never starts afresh over plans that existed.

// seed starts Chopin, adds a repository and some documents, and stops it
// as chosen (kill -9 leaves the write-ahead log as a crash does).
func seed(t *testing.T, crash bool) *home {
	h := newHome(t)
	srv := h.start("serve")
	h.api(srv.origin, "POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil)
	for i := range 30 {
		h.api(srv.origin, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "Plan " + strings.Repeat("x", i)}, nil)
	}
	if crash {
		srv.kill9(t)
	} else {
		srv.cmd.Process.Signal(os.Interrupt)
		<-srv.done
	}
	return h
}

// refusesToStart runs chopin serve, which must exit 1 saying want.
func (h *home) refusesToStart(t *testing.T, want string) {
	t.Helper()
	before := snapshotFiles(t, h.dataDir)
	_, stderr, code := h.run("serve")
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("chopin serve exited %d saying:\n%s\nwant exit 1 saying %q", code, stderr, want)
	}
	if after := snapshotFiles(t, h.dataDir); after != before {
		t.Errorf("the database files changed:\n%s\nthen\n%s", before, after)
	}
}

// snapshotFiles lists the database's files with their sizes and modes.
func snapshotFiles(t *testing.T, dir string) string {
	var b strings.Builder
	for _, name := range []string{"chopin.db", "chopin.db-wal"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err == nil {
			fmt.Fprintf(&b, "%s %v %d bytes, modified %v\n", name, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

func TestStartRefusesAnEmptyDatabaseBesideItsLog(t *testing.T) {
	h := seed(t, true)
	db := filepath.Join(h.dataDir, "chopin.db")
	if fi, err := os.Stat(db + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no write-ahead log after the crash: %v", err)
	}
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	h.refusesToStart(t, "chopin.db in "+h.dataDir+" is empty (0 bytes) but its write-ahead log chopin.db-wal holds")
}

func TestStartRefusesAFolderWhoseDatabaseIsGone(t *testing.T) {
	h := seed(t, false)
	for _, name := range []string{"chopin.db", "chopin.db-wal", "chopin.db-shm"} {
		os.Remove(filepath.Join(h.dataDir, name))
	}
	h.refusesToStart(t, "Chopin ran in "+h.dataDir+" before, but its database chopin.db is missing.")
	if err := os.WriteFile(filepath.Join(h.dataDir, "chopin.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.refusesToStart(t, "its database chopin.db is empty (0 bytes)")
}

func TestStartRefusesADamagedDatabase(t *testing.T) {
	h := seed(t, false)
	db := filepath.Join(h.dataDir, "chopin.db")
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	if fi.Size() < 5*4096 {
		t.Fatalf("the database is only %d bytes", fi.Size())
	}
	// Scribble over the fourth page, a table's B-tree page.
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff\x00scribble", 200)), 3*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	h.refusesToStart(t, "chopin.db in "+h.dataDir+" is damaged (SQLite's check found:")
}

func TestStartRefusesADatabaseItCannotWrite(t *testing.T) {
	h := seed(t, false)
	db := filepath.Join(h.dataDir, "chopin.db")
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(db, 0o600) })
	h.refusesToStart(t, "chopin.db in "+h.dataDir+" cannot be written (it is read-only)")
}

// A start reads the whole database (SQLite's quick_check) only when the
// last stop was not clean: a start after a clean stop skips it, so its
// time does not grow with the data; a start after kill -9 runs it. The
// start-up's log line says which, with the time of every step.
func TestOnlyAStartAfterACrashChecksTheWholeDatabase(t *testing.T) {
	h := seed(t, false)
	startLog := func(srv *server, crash bool) string {
		t.Helper()
		if crash {
			srv.kill9(t)
		} else {
			srv.cmd.Process.Signal(os.Interrupt)
			<-srv.done
		}
		for _, line := range strings.Split(srv.stderr.String(), "\n") {
			if strings.Contains(line, "msg=start-up ") {
				return line
			}
		}
		t.Fatalf("no start-up line in the log:\n%s", srv.stderr)
		return ""
	}
	clean := startLog(h.start("serve"), true)
	if !strings.Contains(clean, "whole_check=false") {
		t.Errorf("a start after a clean stop checked the whole database:\n%s", clean)
	}
	for _, step := range []string{"took=", "lock=", "store.check=", "store.migrate=", "listen=", "restore=", "serve="} {
		if !strings.Contains(clean, " "+step) {
			t.Errorf("the start-up line lacks %q:\n%s", step, clean)
		}
	}
	// That start was killed: the next one checks the whole file.
	crashed := startLog(h.start("serve"), false)
	if !strings.Contains(crashed, "whole_check=true") || !strings.Contains(crashed, `why="Chopin did not stop cleanly last time`) {
		t.Errorf("a start after kill -9 did not check the whole database:\n%s", crashed)
	}
	// And that one stopped cleanly again.
	again := startLog(h.start("serve"), false)
	if !strings.Contains(again, "whole_check=false") {
		t.Errorf("a start after a clean stop checked the whole database:\n%s", again)
	}
	srv := h.start("serve")
	var page struct{ Channels []channel }
	h.api(srv.origin, "GET", "/api/repositories/octo/plans/channels?limit=100", nil, &page)
	if len(page.Channels) != 30 {
		t.Errorf("after these starts: %d documents, want 30", len(page.Channels))
	}
}

// Once `chopin token --rotate` returns, the running Chopin refuses the old
// token and takes the new one: there is no second in between.
func TestTokenRotationTakesEffectAtOnce(t *testing.T) {
	h := newHome(t)
	srv := h.start("serve")
	old, _ := os.ReadFile(filepath.Join(h.configDir, "agent-token"))
	if code := h.api(srv.origin, "GET", "/api/repositories", nil, nil); code != 200 {
		t.Fatalf("with the token: %d", code)
	}
	for range 5 {
		stdout, _, code := h.run("token", "--rotate")
		if code != 0 {
			t.Fatalf("chopin token --rotate exited %d", code)
		}
		for _, tc := range []struct {
			token string
			want  int
		}{{strings.TrimSpace(string(old)), 401}, {strings.TrimSpace(stdout), 200}} {
			req, _ := http.NewRequest("GET", srv.origin+"/api/repositories", nil)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Fatalf("right after the rotation, the %s token: %d, want %d", map[int]string{401: "old", 200: "new"}[tc.want], res.StatusCode, tc.want)
			}
		}
		old = []byte(stdout)
	}
}

// chopin open --sign-out-everywhere signs every browser out, through the
// running Chopin or, when none runs, in its database.
func TestSignOutEverywhere(t *testing.T) {
	h := newHome(t)
	srv := h.start("serve")
	jar := signedInBrowser(t, h, srv.origin)
	stdout, stderr, code := h.run("open", "--sign-out-everywhere")
	if code != 0 || !strings.HasPrefix(stdout, "Signed out 1 browser sessions.") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if status := sessionStatus(t, jar, srv.origin); status != 401 {
		t.Fatalf("after signing out, the browser's /api/session: %d", status)
	}
	jar = signedInBrowser(t, h, srv.origin)
	srv.cmd.Process.Signal(os.Interrupt)
	<-srv.done
	if stdout, stderr, code = h.run("open", "--sign-out-everywhere"); code != 0 || !strings.HasPrefix(stdout, "Signed out 1 browser sessions.") {
		t.Fatalf("not running: exit %d: %s %s", code, stdout, stderr)
	}
	srv = h.start("serve")
	if status := sessionStatus(t, jar, srv.origin); status != 401 {
		t.Fatalf("signed out while Chopin was stopped, the browser's /api/session: %d", status)
	}
}

func signedInBrowser(t *testing.T, h *home, origin string) http.CookieJar {
	var link struct{ URL string }
	h.api(origin, "POST", "/api/launch-links", nil, &link)
	jar, _ := cookiejar.New(nil)
	res, err := (&http.Client{Jar: jar}).Get(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if status := sessionStatus(t, jar, origin); status != 200 {
		t.Fatalf("signed in, /api/session: %d", status)
	}
	return jar
}

func sessionStatus(t *testing.T, jar http.CookieJar, origin string) int {
	u, _ := url.Parse(origin)
	req, _ := http.NewRequest("GET", origin+"/api/session", nil)
	for _, c := range jar.Cookies(u) {
		req.AddCookie(c)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
