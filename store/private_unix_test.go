//go:build !windows

package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The database and its -wal and -shm files are the owner's alone, whatever
// the umask.
func TestDatabaseFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	s, err := Open(context.Background(), filepath.Join(dir, "chopin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	repo := mustRepo(t, s, "octo/plans")
	if _, err := s.CreateChannel(context.Background(), repo.NodeID, "Private"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"chopin.db", "chopin.db-wal", "chopin.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s is %v, want 0600", name, perm)
		}
	}
}
