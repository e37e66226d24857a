package app

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"testing"
)

// chopin --version and chopin version print the version, commit and date
// the toolchain recorded, unless a release build set them with -ldflags.
func TestVersion(t *testing.T) {
	readBuildInfo = func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.time", Value: "2026-11-30T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, true
	}
	t.Cleanup(func() { readBuildInfo = debug.ReadBuildInfo })
	want := "chopin v1.4.0 (commit 0123abcd+modified, built 2026-11-30T10:00:00Z, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		cli := &CLI{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
		if code := cli.Run(context.Background(), args); code != 0 || stdout.String() != want || stderr.Len() != 0 {
			t.Errorf("chopin %v: exit %d, stdout %q, stderr %q; want 0 and %q", args, code, &stdout, &stderr, want)
		}
	}

	Version, Commit, BuildDate = "v2.0.0", "fedcba98", "2026-12-01T00:00:00Z"
	t.Cleanup(func() { Version, Commit, BuildDate = "", "", "" })
	if got, want := Build().String(), "chopin v2.0.0 (commit fedcba98, built 2026-12-01T00:00:00Z, "+runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH+")"; got != want {
		t.Errorf("release build: %q, want %q", got, want)
	}

	readBuildInfo = func() (*debug.BuildInfo, bool) { return nil, false }
	Version, Commit, BuildDate = "", "", ""
	if got := Build(); got.Version != "dev" || got.Commit != "" {
		t.Errorf("without build information: %+v, want version dev", got)
	}
}

// HEAD is answered wherever GET is, with GET's status and headers and no
// body; a route without GET still refuses it.
func TestHeadWhereverGet(t *testing.T) {
	ta := startApp(t)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/healthz", 200},
		{"/", 200},
		{"/api/session", 200},
		{"/api/repositories", 200},
		{"/api/nothing-here", 404},
	} {
		get := ta.Do("GET", tc.path, nil)
		head := ta.Do("HEAD", tc.path, nil)
		if head.Status != tc.status || get.Status != head.Status || len(head.Body) != 0 ||
			head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %q %q; GET: %d %q, want status %d, GET's type and no body",
				tc.path, head.Status, head.Header.Get("Content-Type"), head.Body, get.Status, get.Header.Get("Content-Type"), tc.status)
		}
	}
}
