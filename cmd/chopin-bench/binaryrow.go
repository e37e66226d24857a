package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// releaseFlags are how a release of chopin is built: no symbol table or
// DWARF, no local paths.
var releaseFlags = []string{"-trimpath", "-ldflags=-s -w"}

// binaryRows: the size of the release binary built from the module's
// source (not -bin's, which may be built otherwise), beside the
// hello-world server built the same way.
func (b *bench) binaryRows(ctx context.Context) ([]row, error) {
	chopin, hello := filepath.Join(b.tmp, "chopin-release"), filepath.Join(b.tmp, "hello-release")
	flags := releaseFlags
	if b.o.quick {
		// -trimpath compiles every package again; a quick run links what
		// the other builds compiled.
		flags = releaseFlags[1:]
	}
	if err := goBuild(ctx, b.module, chopin, ".", flags...); err != nil {
		return nil, err
	}
	if err := goBuild(ctx, filepath.Join(b.tmp, "hello-src"), hello, ".", flags...); err != nil {
		return nil, err
	}
	c, h := fileSize(chopin), fileSize(hello)
	if c == 0 || h == 0 {
		return nil, fmt.Errorf("the release builds are missing: %s %d bytes, %s %d bytes", chopin, c, hello, h)
	}
	defer os.Remove(chopin)
	mb := func(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }
	return []row{{"binary", "release binary (`-trimpath -ldflags=\"-s -w\"`, CGO_ENABLED=0) built from this source, " + runtime.GOOS + "/" + runtime.GOARCH,
		mb(c), mb(h) + " (hello world, built the same way)", ratioText(float64(c), float64(h)), "under 20 MB", met(c < 20_000_000)}}, nil
}
