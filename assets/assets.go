// Package assets embeds the built web UI (assets/dist, committed so that
// `go build` needs no npm) and Chopin's icon. Every built file is stored
// gzip-compressed, as name.gz; the package hands out the compressed bytes
// for serving as they are, and decompresses only on request. It knows
// nothing else.
package assets

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io"
	"io/fs"
	"path"
)

//go:generate go run ./build

//go:embed dist
var dist embed.FS

// Icon is Chopin's icon, an SVG: the web UI's favicon and the icon of the
// Linux desktop entry.
//
//go:embed icon.svg
var Icon []byte

// Gzipped returns the built file name (a path such as "app-XYZ.js" or
// "chunks/x.js"), gzip-compressed, and whether there is one.
func Gzipped(name string) ([]byte, bool) {
	if !fs.ValidPath(name) || name == "." {
		return nil, false
	}
	b, err := dist.ReadFile(path.Join("dist", name+".gz"))
	return b, err == nil
}

// ReadFile returns the built file name, decompressed.
func ReadFile(name string) ([]byte, error) {
	gz, ok := Gzipped(name)
	if !ok {
		return nil, fs.ErrNotExist
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
