// Package assets embeds the built web UI (assets/dist, committed so that
// `go build` needs no npm) and serves it. It knows nothing else.
package assets

import (
	"embed"
	"io/fs"
)

//go:generate go run ./build

//go:embed dist
var dist embed.FS

// FS is the built UI: index.html at its root and the bundle beside it.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embed directive guarantees dist exists
	}
	return sub
}
