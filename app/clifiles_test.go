package app

// The files chopin export -o and chopin backup write, the paths a person
// names: an existing file is replaced only with --force, anything but a
// regular file is left alone even with it, and the copies are private
// (0600), whether Chopin is running or not.

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// checkPrivate fails unless path is a regular file of mode 0600 (Windows
// has no such modes).
func checkPrivate(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("%s has mode %v, want a regular file of mode 0600", path, fi.Mode())
	}
}

// chopin export -o replaces an existing file only with --force, in the
// words chopin backup uses, and the file it writes is 0600.
func TestExportRefusesToReplace(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	ta.CreateDocument("acme/rocket", "Launch plan")
	cli, stdout, stderr := cliIn(dir)

	out := filepath.Join(t.TempDir(), "plan.md")
	if code := cli.Run(context.Background(), []string{"export", "acme/rocket/launch-plan", "-o", out}); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	checkPrivate(t, out)
	exported, _ := os.ReadFile(out)

	os.WriteFile(out, []byte("mine\n"), 0o644)
	code := cli.Run(context.Background(), []string{"export", "acme/rocket/launch-plan", "-o", out})
	want := "chopin export: " + out + " already exists; add --force to replace it\n"
	if code != 1 || stderr.String() != want {
		t.Errorf("export over a file: exit %d\nstderr: %q\nwant:   %q", code, stderr, want)
	}
	if got, _ := os.ReadFile(out); string(got) != "mine\n" {
		t.Errorf("the file now holds %q", got)
	}

	stderr.Reset()
	if code := cli.Run(context.Background(), []string{"export", "acme/rocket/launch-plan", "-o", out, "--force"}); code != 0 {
		t.Fatalf("export --force: exit %d\n%s%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(out); string(got) != string(exported) {
		t.Errorf("after --force the file holds %q, want %q", got, exported)
	}
	checkPrivate(t, out)
	leftovers(t, filepath.Dir(out), "plan.md")
}

// leftovers fails if dir holds anything but names.
func leftovers(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		found := false
		for _, n := range names {
			found = found || e.Name() == n
		}
		if !found {
			t.Errorf("%s holds %s, left behind", dir, e.Name())
		}
	}
}

// A symbolic link, a named pipe, a device or a folder where the file
// should go is left as it is, with or without --force, by export and by
// backup (Chopin running or not), and nothing is written through it.
func TestExportAndBackupRefuseWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	ta := startAppWith(t, testConfig(t, dir))
	ta.AddRepository("acme/rocket")
	ta.CreateDocument("acme/rocket", "Launch plan")
	cli, stdout, stderr := cliIn(dir)

	places := t.TempDir()
	target := filepath.Join(places, "target")
	os.WriteFile(target, []byte("kept\n"), 0o600)
	type place struct{ path, said string }
	var all []place
	add := func(name, said string, make func(path string) error) {
		path := filepath.Join(places, name)
		if err := make(path); err != nil {
			t.Logf("no %s here: %v", name, err)
			return
		}
		all = append(all, place{path, said})
	}
	const notAFile = ", not a regular file; chopin writes only a new file or over a regular one, so it left it alone"
	add("folder", "%s is a directory; name the file to write", func(p string) error { return os.Mkdir(p, 0o700) })
	add("link", "%s is a symbolic link"+notAFile, func(p string) error { return os.Symlink(target, p) })
	add("dangling", "%s is a symbolic link"+notAFile, func(p string) error { return os.Symlink(filepath.Join(places, "nothing"), p) })
	add("fifo", "%s is a named pipe (FIFO)"+notAFile, makeFIFO)
	add("device", "%s is a device"+notAFile, makeDevice)
	before := map[string]fs.FileMode{}
	for _, p := range all {
		fi, _ := os.Lstat(p.path)
		before[p.path] = fi.Mode()
	}

	run := func(args ...string) {
		t.Helper()
		for _, p := range all {
			for _, force := range []bool{false, true} {
				stdout.Reset()
				stderr.Reset()
				argv := append(append([]string{}, args...), p.path)
				if args[0] == "export" {
					argv = append(append([]string{}, args...), "-o", p.path)
				}
				if force {
					argv = append(argv, "--force")
				}
				code := cli.Run(context.Background(), argv)
				want := "chopin " + args[0] + ": " + strings.Replace(p.said, "%s", p.path, 1) + "\n"
				if code != 1 || stderr.String() != want {
					t.Errorf("%q: exit %d\nstderr: %q\nwant:   %q", argv, code, stderr, want)
				}
				if fi, err := os.Lstat(p.path); err != nil || fi.Mode() != before[p.path] {
					t.Fatalf("%q: %s is now %v, %v; was %v", argv, p.path, fi.Mode(), err, before[p.path])
				}
			}
		}
		if got, _ := os.ReadFile(target); string(got) != "kept\n" {
			t.Fatalf("%q: the link's target now holds %q", args, got)
		}
		leftovers(t, places, "target", "folder", "link", "dangling", "fifo", "device")
	}
	run("export", "acme/rocket/launch-plan")
	run("backup")
	ta.Stop()
	run("backup")
}
