package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// These tests build the real binary and run its commands as a person would:
// separate processes sharing a data and a config directory.

var chopinBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "chopin-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	chopinBin = filepath.Join(dir, "chopin")
	if runtime.GOOS == "windows" {
		chopinBin += ".exe"
	}
	build := exec.Command("go", "build", "-o", chopinBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// home is one person's computer: their config and data directories, and a
// browser that only writes down the links it is asked to open.
type home struct {
	t          testing.TB
	configDir  string
	dataDir    string
	browserLog string
	env        []string
}

func newHome(t testing.TB) *home {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake browser is a shell script")
	}
	root := t.TempDir()
	h := &home{
		t:          t,
		configDir:  filepath.Join(root, "config"),
		dataDir:    filepath.Join(root, "data"),
		browserLog: filepath.Join(root, "browser.log"),
	}
	browser := filepath.Join(root, "browser")
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" + h.browserLog + "'\n"
	if err := os.WriteFile(browser, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	h.env = apptest.ProcessEnv(root, "PORT=0", "BROWSER="+browser)
	return h
}

// run runs a chopin command to its end.
func (h *home) run(args ...string) (stdout, stderr string, code int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chopinBin, args...)
	cmd.Env = h.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		h.t.Fatalf("chopin %s did not finish within 30s\nstdout: %s\nstderr: %s", strings.Join(args, " "), &out, &errOut)
	}
	if err != nil && cmd.ProcessState == nil {
		h.t.Fatalf("chopin %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// serve starts "chopin serve" and returns its origin once it answers.
func (h *home) serve() string {
	h.t.Helper()
	return h.start("serve").origin
}

// server is a running "chopin serve".
type server struct {
	origin string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	stderr *bytes.Buffer // its log: read it once done is closed
}

// start starts a chopin command that serves and waits until its /healthz
// answers 200. The process is killed when the test ends, if it still runs.
func (h *home) start(args ...string) *server {
	h.t.Helper()
	cmd := exec.Command(chopinBin, args...)
	cmd.Env = h.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	srv := &server{cmd: cmd, done: make(chan struct{}), stderr: &stderr}
	first := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		first <- s.Text()
		for s.Scan() {
		}
		cmd.Wait()
		close(srv.done)
	}()
	h.t.Cleanup(func() {
		cmd.Process.Kill()
		<-srv.done
		if h.t.Failed() {
			h.t.Logf("chopin %s's log:\n%s", strings.Join(args, " "), &stderr)
		}
	})
	select {
	case line := <-first:
		m := regexp.MustCompile(`^Chopin is running at (http://127\.0\.0\.1:\d+)\.`).FindStringSubmatch(line)
		if m == nil {
			h.t.Fatalf("chopin %s said %q", strings.Join(args, " "), line)
		}
		srv.origin = m[1]
	case <-time.After(15 * time.Second):
		h.t.Fatalf("chopin %s did not start within 15s", strings.Join(args, " "))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(srv.origin + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return srv
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s/healthz did not answer 200 within 10s: %v", srv.origin, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill9 kills the process as a crash would: no shutdown, no final checkpoint.
func (s *server) kill9(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
}

// browserOpened returns the links the fake browser was asked to open.
func (h *home) browserOpened() []string {
	b, err := os.ReadFile(h.browserLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// checkLaunchLink checks that link signs a browser in once, and only once.
func checkLaunchLink(t *testing.T, origin, link string) {
	t.Helper()
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(origin) + `/launch\?token=[A-Za-z0-9_-]{43}$`).MatchString(link) {
		t.Fatalf("launch link = %q, want %s/launch?token=...", link, origin)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		t.Errorf("GET %s: %s with %d cookies, want 303 with a session cookie", link, resp.Status, len(resp.Cookies()))
	}
	resp, err = client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("second GET %s: %s, want 403", link, resp.Status)
	}
}

func TestFirstChopinOpensTheBrowser(t *testing.T) {
	h := newHome(t)
	origin := h.start().origin
	deadline := time.Now().Add(10 * time.Second)
	for len(h.browserOpened()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	opened := h.browserOpened()
	if len(opened) != 1 {
		t.Fatalf("the browser was asked to open %q, want one launch link", opened)
	}
	checkLaunchLink(t, origin, opened[0])
}

func TestServeStopsCleanlyOnSIGTERM(t *testing.T) {
	h := newHome(t)
	srv := h.start("serve")
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.done:
		if !srv.cmd.ProcessState.Success() {
			t.Errorf("chopin serve after SIGTERM: %v, want exit 0", srv.cmd.ProcessState)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("chopin serve did not stop within 15s of SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(h.dataDir, "instance.json")); !os.IsNotExist(err) {
		t.Errorf("instance.json left behind: %v", err)
	}
	if _, stderr, code := h.run("open"); code != 1 || !strings.Contains(stderr, "Chopin is not running") {
		t.Errorf("chopin open after the stop: exit %d, %s", code, stderr)
	}
}

func TestSecondChopinOpensTheRunningOne(t *testing.T) {
	h := newHome(t)
	origin := h.serve()

	stdout, stderr, code := h.run()
	if code != 0 {
		t.Fatalf("second chopin exited %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	opened := h.browserOpened()
	if len(opened) != 1 {
		t.Fatalf("the browser was asked to open %q, want one launch link", opened)
	}
	checkLaunchLink(t, origin, opened[0])
	if !strings.Contains(stdout, opened[0]) {
		t.Errorf("second chopin did not print the link it opened\nstdout: %s", stdout)
	}

	// serve does not hand over: it says where Chopin runs, and fails.
	stdout, stderr, code = h.run("serve")
	if code != 1 || !strings.Contains(stderr, "Chopin is already running at "+origin) {
		t.Errorf("second chopin serve: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if opened := h.browserOpened(); len(opened) != 1 {
		t.Errorf("after chopin serve the browser was asked to open %q, want only the first link", opened)
	}
}

func TestOpen(t *testing.T) {
	h := newHome(t)

	_, stderr, code := h.run("open")
	// chopin is not on the PATH here: the message names the binary itself.
	bin, _ := filepath.EvalSymlinks(chopinBin)
	want := "chopin: Chopin is not running (data directory " + h.dataDir + ").\nStart it with \"" + bin + "\".\n"
	if code != 1 || stderr != want {
		t.Errorf("chopin open with nothing running: exit %d, stderr %q; want 1, %q", code, stderr, want)
	}

	origin := h.serve()
	stdout, stderr, code := h.run("open", "--print-url")
	if code != 0 {
		t.Fatalf("chopin open --print-url exited %d\nstderr: %s", code, stderr)
	}
	checkLaunchLink(t, origin, strings.TrimSpace(stdout))
	if opened := h.browserOpened(); len(opened) != 0 {
		t.Errorf("--print-url opened the browser on %q", opened)
	}

	stdout, stderr, code = h.run("open")
	opened := h.browserOpened()
	if code != 0 || len(opened) != 1 {
		t.Fatalf("chopin open: exit %d, browser opened %q\nstdout: %s\nstderr: %s", code, opened, stdout, stderr)
	}
	checkLaunchLink(t, origin, opened[0])

	// A page to land on: its path, or its whole address.
	for _, page := range []string{"/documents/octo/plans/launch?x=1", origin + "/documents/octo/plans/launch?x=1"} {
		stdout, stderr, code = h.run("open", "--print-url", page)
		link := strings.TrimSpace(stdout)
		if code != 0 || !strings.HasSuffix(link, "&next=%2Fdocuments%2Focto%2Fplans%2Flaunch%3Fx%3D1") {
			t.Fatalf("chopin open --print-url %s: exit %d, link %q\nstderr: %s", page, code, link, stderr)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/documents/octo/plans/launch?x=1" {
			t.Errorf("GET %s: %s to %q, want 303 to the page", link, resp.Status, loc)
		}
	}
	if _, stderr, code := h.run("open", "documents/octo"); code != 2 || !strings.Contains(stderr, "is not a page of Chopin") {
		t.Errorf("chopin open documents/octo: exit %d, stderr %q; want 2 and a reason", code, stderr)
	}
}

func TestOpenWithAnotherToken(t *testing.T) {
	h := newHome(t)
	h.serve()
	other := t.TempDir()
	h.env = append(h.env, "CHOPIN_CONFIG_DIR="+other) // the last one wins
	if _, stderr, code := h.run("token"); code != 0 {
		t.Fatalf("chopin token: %s", stderr)
	}
	_, stderr, code := h.run("open", "--print-url")
	if code != 1 || !strings.Contains(stderr, "did not accept the agent token in "+other) {
		t.Errorf("chopin open with another config directory: exit %d, stderr %q", code, stderr)
	}
}

func TestToken(t *testing.T) {
	h := newHome(t)
	stdout, stderr, code := h.run("token")
	if code != 0 {
		t.Fatalf("chopin token exited %d: %s", code, stderr)
	}
	token := strings.TrimSpace(stdout)
	file, err := os.ReadFile(filepath.Join(h.configDir, "agent-token"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^chopin_a_[A-Za-z0-9_-]{43}$`).MatchString(token) || string(file) != token+"\n" {
		t.Fatalf("chopin token printed %q; the file holds %q", stdout, file)
	}
	if again, _, _ := h.run("token"); again != stdout {
		t.Errorf("chopin token printed %q, then %q", stdout, again)
	}

	stdout, _, code = h.run("token", "--rotate")
	rotated := strings.TrimSpace(stdout)
	if code != 0 || rotated == token || !regexp.MustCompile(`^chopin_a_[A-Za-z0-9_-]{43}$`).MatchString(rotated) {
		t.Fatalf("chopin token --rotate: exit %d, printed %q (old %q)", code, stdout, token)
	}
	if now, _, _ := h.run("token"); strings.TrimSpace(now) != rotated {
		t.Errorf("after rotation chopin token printed %q, want %q", now, rotated)
	}
}

func TestUsage(t *testing.T) {
	h := newHome(t)
	tests := []struct {
		args     []string
		code     int
		stdout   string // a line the output contains
		stderr   string
		noServer bool
	}{
		{args: []string{"--help"}, stdout: "chopin open [--print-url] [PAGE]"},
		{args: []string{"help", "token"}, stdout: "--rotate"},
		{args: []string{"serve", "--help"}, stdout: "--no-browser"},
		{args: []string{"open", "-h"}, stdout: "--print-url"},
		{args: []string{"token", "--help"}, stdout: "--data-dir DIR"},
		{args: []string{"version"}, stdout: "chopin dev ("},
		{args: []string{"planner"}, code: 2, stderr: `chopin planner: name a document: its URL, as the browser shows it, or its ID.`},
		{args: []string{"teleport"}, code: 2, stderr: `chopin: unknown command "teleport"`},
		{args: []string{"token", "--bogus"}, code: 2, stderr: "chopin token: flag provided but not defined: -bogus"},
		{args: []string{"token", "extra"}, code: 2, stderr: `chopin token: unexpected argument "extra"`},
		{args: []string{"--port", "70000", "token"}, code: 1, stderr: "  --port=70000: must be a port number from 0 to 65535 (0 picks a free port)"},
		{args: []string{"serve", "--host", "0.0.0.0"}, code: 1, stderr: "  --host=0.0.0.0: Chopin listens only on this computer"},
	}
	for _, tt := range tests {
		stdout, stderr, code := h.run(tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("chopin %s: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout with %q, stderr with %q",
				strings.Join(tt.args, " "), code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
}
