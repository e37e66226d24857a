package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// writeNamedFile: what fill writes gets the name and the mode asked for,
// whatever mode fill created it with, and nothing else is left in the
// folder, whether fill succeeds or fails.
func TestWriteNamedFile(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "copy.db")
	err := writeNamedFile(dest, false, 0o600, func(partial string) error {
		if filepath.Dir(filepath.Dir(partial)) != dir {
			t.Errorf("fill writes %s, not in a folder beside %s", partial, dest)
		}
		if fi, err := os.Stat(filepath.Dir(partial)); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700) {
			t.Errorf("the folder fill writes in: %v, %v; want mode 0700", fi.Mode(), err)
		}
		return os.WriteFile(partial, []byte("copy"), 0o666) // as VACUUM INTO does
	})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dest); err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("%s: %v, %v; want a regular file of mode 0600", dest, fi.Mode(), err)
	}
	failed := errors.New("the copy failed")
	if err := writeNamedFile(filepath.Join(dir, "other.db"), false, 0o600, func(partial string) error {
		os.WriteFile(partial, []byte("half"), 0o600)
		return failed
	}); err != failed {
		t.Errorf("fill's error came back as %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "copy.db" {
		t.Errorf("the folder holds %v, want copy.db alone", entries)
	}
}

// A file that appears under the name while fill runs is not replaced
// without force, and a link that appears is not replaced even with it.
func TestWriteNamedFileRechecksBeforeTheRename(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "plan.md")
	err := writeNamedFile(dest, false, 0o600, func(partial string) error {
		os.WriteFile(dest, []byte("theirs"), 0o644)
		return os.WriteFile(partial, []byte("ours"), 0o600)
	})
	if want := dest + " already exists; add --force to replace it"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if got, _ := os.ReadFile(dest); string(got) != "theirs" {
		t.Errorf("the file that appeared now holds %q", got)
	}

	os.Remove(dest)
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("kept"), 0o600)
	err = writeNamedFile(dest, true, 0o600, func(partial string) error {
		if err := os.Symlink(target, dest); err != nil {
			t.Skipf("cannot make a symbolic link here: %v", err)
		}
		return os.WriteFile(partial, []byte("ours"), 0o600)
	})
	if err == nil || !strings.HasSuffix(err.Error(), " is a symbolic link, not a regular file; chopin writes only a new file or over a regular one, so it left it alone") {
		t.Errorf("err = %v", err)
	}
	if fi, err := os.Lstat(dest); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("the link is now %v, %v", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(target); string(got) != "kept" {
		t.Errorf("the link's target now holds %q", got)
	}
}

// A file in a folder that does not exist is refused in those words, before
// fill runs.
func TestWriteNamedFileInAMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nowhere")
	err := writeNamedFile(filepath.Join(dir, "b.db"), false, 0o600, func(string) error {
		t.Error("fill ran")
		return nil
	})
	if want := "there is no folder " + dir + "; create it first, or name a file in another folder"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// A read of a file being sent stops once the command's context ends.
func TestContextReaderStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := contextReader{ctx, strings.NewReader("# Plan\n")}
	buf := make([]byte, 2)
	if n, err := r.Read(buf); n != 2 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	cancel()
	if rest, err := io.ReadAll(r); len(rest) != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: read %q, %v", rest, err)
	}
}
