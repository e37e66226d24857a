package cli

// The files a person names on the command line: the copy chopin backup
// FILE and chopin export -o FILE write, the desktop entry, and the
// Markdown file chopin import reads. A named path can be anything: a file
// the person wants to keep, a link into another folder, a named pipe, a
// device such as /dev/null, a folder. So the commands write only a new file
// or over a regular one (over an existing one only when asked), never
// through a link or into a pipe or device, and never leave half a file
// under the name; and they read only regular files, so no open waits for
// a writer that may never come, deaf to Ctrl+C.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeNamedFile writes the file a person named, dest, whole or not at
// all. fill writes it at the path it is given: a new name in a private
// folder beside dest, so the copy is never readable by others while it is
// written (whatever mode fill creates it with) and the rename that
// finishes it stays on one disk. The file is then given mode, flushed to
// disk and renamed to dest.
//
// dest must be missing, or a regular file when force is set: anything else
// is refused before fill runs, and again just before the rename, in case
// it changed meanwhile. Without force an existing file is never replaced,
// not even one that appears while fill runs.
func writeNamedFile(dest string, force bool, mode fs.FileMode, fill func(path string) error) error {
	if err := checkTarget(dest, force); err != nil {
		return err
	}
	dir := filepath.Dir(dest)
	private, err := os.MkdirTemp(dir, ".chopin-partial-*")
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("there is no folder %s; create it first, or name a file in another folder", dir)
	}
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	defer os.RemoveAll(private)
	// Not dest's own name: a desktop that scans a folder for its entries
	// must not see the partial one.
	partial := filepath.Join(private, "partial")
	if err := fill(partial); err != nil {
		return err
	}
	if err := settle(partial, mode); err != nil {
		return err
	}
	if err := checkTarget(dest, force); err != nil {
		return err
	}
	if !force {
		// A hard link never replaces anything: no window between the
		// check and the rename where a file that appeared is lost.
		err := os.Link(partial, dest)
		if err == nil {
			syncDir(dir)
			return nil
		}
		if errors.Is(err, fs.ErrExist) {
			if refused := checkTarget(dest, false); refused != nil {
				return refused
			}
			return fmt.Errorf("%s already exists; add --force to replace it", dest)
		}
		// A file system without hard links (FAT, some network shares):
		// the check above is as close as it gets.
	}
	if err := os.Rename(partial, dest); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// checkTarget refuses dest unless it is missing or, with force, a regular
// file.
func checkTarget(dest string, force bool) error {
	fi, err := os.Lstat(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory; name the file to write", dest)
	case !fi.Mode().IsRegular():
		return notRegular(dest, fi.Mode(), "chopin writes only a new file or over a regular one, so it left it alone")
	case !force:
		return fmt.Errorf("%s already exists; add --force to replace it", dest)
	}
	return nil
}

// settle gives the finished file its mode and flushes it to disk (SQLite's
// VACUUM INTO, which writes backups, does not).
func settle(path string, mode fs.FileMode) error {
	if err := os.Chmod(path, mode); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// openRegular opens a file a person named for reading, following links,
// if it is a regular file; anything else is refused with advice. The open
// itself does not wait: a pipe put in the file's place after the check is
// opened without waiting for a writer, and refused.
func openRegular(path, advice string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi.Mode(), advice)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = notRegular(path, fi.Mode(), advice)
		}
		return nil, err
	}
	return f, nil
}

// notRegular says what path is instead of a regular file.
func notRegular(path string, mode fs.FileMode, advice string) error {
	kind := "special file"
	switch {
	case mode.IsDir():
		kind = "directory"
	case mode&fs.ModeSymlink != 0:
		kind = "symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		kind = "named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		kind = "socket"
	case mode&fs.ModeDevice != 0:
		kind = "device"
	}
	return fmt.Errorf("%s is a %s, not a regular file; %s", path, kind, advice)
}

// contextReader reads r until ctx ends (Ctrl+C), so a command sending a
// file stops between reads instead of reading on.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (r contextReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
