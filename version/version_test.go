package version

import (
	"runtime"
	"runtime/debug"
	"strings"
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
	if got := Build().String(); got != strings.TrimSuffix(want, "\n") {
		t.Errorf("Build() = %q, want %q", got, want)
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
