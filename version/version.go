package version

// The build's version, commit and date, for `chopin version`, `chopin
// --version` and GET /api/session. A release build sets them with -ldflags
// (scripts/release.sh); any other build reads what the Go toolchain recorded
// in the binary: the module version for `go install ...@latest`, the VCS
// revision and time for a build from a checkout.

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by a release build:
//
//	go build -ldflags "-X github.com/chopin-desktop/chopin/version.Version=v1.2.0 \
//	  -X github.com/chopin-desktop/chopin/version.Commit=<sha> -X github.com/chopin-desktop/chopin/version.BuildDate=<RFC 3339>"
var (
	Version   = ""
	Commit    = ""
	BuildDate = ""
)

// BuildInfo is what this binary knows of its own build. An empty field is
// unknown.
type BuildInfo struct {
	Version  string // v1.2.0, or "dev" for a build of a checkout
	Commit   string // the VCS revision, with "+modified" for a tree with uncommitted changes
	Date     string // when the commit was made (or, in a release, built), RFC 3339
	Go       string // the toolchain
	Platform string // GOOS/GOARCH
}

// readBuildInfo is debug.ReadBuildInfo, replaceable by tests.
var readBuildInfo = debug.ReadBuildInfo

// Build returns the version, commit and date: the -ldflags values where a
// release build set them, else what the toolchain recorded.
func Build() BuildInfo {
	b := BuildInfo{Version: Version, Commit: Commit, Date: BuildDate, Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := readBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		var revision, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+modified"
				}
			}
		}
		if b.Commit == "" && revision != "" {
			b.Commit = revision + modified
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// String is the line `chopin version` prints.
func (b BuildInfo) String() string {
	unknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	return fmt.Sprintf("chopin %s (commit %s, built %s, %s, %s)",
		b.Version, unknown(b.Commit), unknown(b.Date), b.Go, b.Platform)
}
