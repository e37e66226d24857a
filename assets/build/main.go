// Command build bundles the web UI (ui/, TypeScript and Preact) into
// assets/dist with esbuild's Go API. `go generate ./assets` runs it; the
// output is committed, so `go build` never needs npm, and it is
// deterministic (content-hashed names, no timestamps, no source maps), so CI
// can rebuild it and compare with what is committed.
//
// It is a separate main package so that the chopin binary does not link
// esbuild: nothing outside this directory imports it.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	uiDir := flag.String("ui", "../ui", "the frontend source directory (with node_modules installed)")
	outDir := flag.String("out", "dist", "where to write the bundle; its contents are replaced")
	flag.Parse()
	if err := build(*uiDir, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "assets/build:", err)
		os.Exit(1)
	}
}

func build(uiDir, outDir string) error {
	ui, err := filepath.Abs(uiDir)
	if err != nil {
		return err
	}
	out, err := filepath.Abs(outDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(ui, "node_modules", "preact")); err != nil {
		return fmt.Errorf("%s has no node_modules: run `npm ci` in ui/ first", ui)
	}
	// Stale chunks of an earlier build must not linger in the embedded FS.
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:     ui,
		EntryPoints:       []string{"src/app.tsx"},
		Outdir:            out,
		Bundle:            true,
		Splitting:         true, // Mermaid is a lazily loaded chunk
		Format:            api.FormatESModule,
		Platform:          api.PlatformBrowser,
		Target:            api.ES2022,
		EntryNames:        "[name]-[hash]",
		ChunkNames:        "chunks/[name]-[hash]",
		AssetNames:        "media/[name]-[hash]",
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		Sourcemap:         api.SourceMapNone,
		LegalComments:     api.LegalCommentsEndOfFile,
		Charset:           api.CharsetUTF8,
		JSX:               api.JSXAutomatic,
		JSXImportSource:   "preact",
		Define:            map[string]string{"process.env.NODE_ENV": `"production"`},
		Loader: map[string]api.Loader{
			".woff": api.LoaderFile, ".woff2": api.LoaderFile, ".ttf": api.LoaderFile,
			".svg": api.LoaderFile, ".png": api.LoaderFile,
		},
		Metafile: true,
		Write:    true,
		LogLevel: api.LogLevelWarning,
	})
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return fmt.Errorf("esbuild failed:\n%s", strings.Join(msgs, ""))
	}

	// The entry's script and stylesheet, by their hashed names, go into the
	// page; chunks are found by the script itself.
	var script, style string
	for _, f := range res.OutputFiles {
		rel, _ := filepath.Rel(out, f.Path)
		rel = filepath.ToSlash(rel)
		if strings.Contains(rel, "/") {
			continue
		}
		switch {
		case strings.HasPrefix(rel, "app-") && strings.HasSuffix(rel, ".js"):
			script = rel
		case strings.HasPrefix(rel, "app-") && strings.HasSuffix(rel, ".css"):
			style = rel
		}
	}
	if script == "" || style == "" {
		return fmt.Errorf("the build made no app script or stylesheet")
	}
	tmpl, err := os.ReadFile(filepath.Join(ui, "index.html"))
	if err != nil {
		return err
	}
	page := bytes.ReplaceAll(tmpl, []byte("{{script}}"), []byte("/"+script))
	page = bytes.ReplaceAll(page, []byte("{{style}}"), []byte("/"+style))
	if err := os.WriteFile(filepath.Join(out, "index.html"), page, 0o644); err != nil {
		return err
	}

	if err := compress(out); err != nil {
		return err
	}

	// A size summary, largest first, for the person running the build.
	type file struct {
		name string
		size int
	}
	var files []file
	total := 0
	for _, f := range res.OutputFiles {
		rel, _ := filepath.Rel(out, f.Path)
		files = append(files, file{filepath.ToSlash(rel), len(f.Contents)})
		total += len(f.Contents)
	}
	slices.SortFunc(files, func(a, b file) int { return b.size - a.size })
	fmt.Printf("assets/dist: %d files, %d KiB before compression\n", len(files)+1, total/1024)
	for _, f := range files[:min(len(files), 6)] {
		fmt.Printf("  %7d KiB  %s\n", f.size/1024, f.name)
	}
	return nil
}

// compress replaces every file under dir with its gzip form, name.gz. The
// binary embeds the compressed files, a third of the size, and serves them
// as they are to browsers (all of which accept gzip). The gzip header has
// no name and no time, so the output depends only on the input.
func compress(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return err
		}
		zw.Write(raw)
		if err := zw.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(path+".gz", buf.Bytes(), 0o644); err != nil {
			return err
		}
		return os.Remove(path)
	})
}
