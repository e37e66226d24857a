package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/store/storetest"
)

// The whole check of the database at start runs only when Chopin did not
// stop cleanly, or when the file changed since it did; the background
// check finds damage later, and from then on the store refuses every write.

// openAt opens the database at path, failing the test on an error.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seedStopped makes a database of a repository and n documents and stops
// it cleanly.
func seedStopped(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chopin.db")
	s := openAt(t, path)
	repo := mustRepo(t, s, "octo/plans")
	for i := range n {
		mustChannel(t, s, repo.NodeID, fmt.Sprintf("Plan %03d %s", i, strings.Repeat("words ", 10)))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenChecksTheWholeFileOnlyAfterAnUncleanStop(t *testing.T) {
	path := seedStopped(t, 20)
	if _, err := os.Stat(path + ".stopped"); err != nil {
		t.Fatalf("a clean stop left no record: %v", err)
	}

	s := openAt(t, path)
	if o := s.Opening(); o.FullCheck {
		t.Fatalf("after a clean stop the whole file was checked: %+v", o)
	}
	if _, err := os.Stat(path + ".stopped"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the record of the clean stop is still there while Chopin runs: %v", err)
	}
	// A stop that is not clean (a crash) leaves no record: the process
	// ends with the store open. Copying the files while it is open is what
	// a crash leaves on disk.
	crashed := filepath.Join(t.TempDir(), "chopin.db")
	copyFile(t, path, crashed)
	copyFile(t, path+"-wal", crashed+"-wal")
	s.Close()
	c := openAt(t, crashed)
	if o := c.Opening(); !o.FullCheck || !strings.Contains(o.Why, "did not stop cleanly") {
		t.Errorf("after a crash: %+v, want the whole check because Chopin did not stop cleanly", o)
	}
	c.Close()

	// A file changed since the clean stop (restored, copied over, written
	// by another program) is checked whole too.
	s = openAt(t, path)
	s.Close()
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	if o := s.Opening(); !o.FullCheck || !strings.Contains(o.Why, "changed since") {
		t.Errorf("after the file changed: %+v, want the whole check because the file changed", o)
	}
	s.Close()

	// A record that does not parse is no record.
	if err := os.WriteFile(path+".stopped", []byte("{half"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	if o := s.Opening(); !o.FullCheck {
		t.Errorf("with an unreadable record: %+v, want the whole check", o)
	}
	s.Close()

	// Every step of the opening is timed.
	s = openAt(t, path)
	defer s.Close()
	var names []string
	for _, st := range s.Opening().Steps {
		names = append(names, st.Name)
	}
	for _, want := range []string{"file", "record", "connect", "check", "write-check", "migrate", "read-pool"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("the opening's steps %v lack %q", names, want)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestBackgroundCheckFindsDamageAndRefusesWrites(t *testing.T) {
	ctx := context.Background()
	path := seedStopped(t, 300)
	s := openAt(t, path)
	defer s.Close()
	repo, err := s.RepositoryByName(ctx, "octo", "plans")
	if err != nil {
		t.Fatal(err)
	}
	var told []Damage
	s.OnDamage(func(d Damage) { told = append(told, d) })

	// A sound database: every table is checked, one step each.
	steps := 0
	d, err := s.Verify(ctx, func(time.Duration) error { steps++; return nil })
	if err != nil || d != nil {
		t.Fatalf("a sound database: damage %+v, %v", d, err)
	}
	if steps < 20 {
		t.Errorf("the check took %d steps, want one per table", steps)
	}

	// The running store's file is damaged under it.
	storetest.Scribble(t, path, "channels")

	d, err = s.Verify(ctx, func(time.Duration) error { return nil })
	if err != nil || d == nil {
		t.Fatalf("a damaged database: damage %+v, %v", d, err)
	}
	if len(told) != 1 || told[0].Found != d.Found || !strings.Contains(d.Found, "channels") {
		t.Errorf("told %+v of the damage %+v", told, d)
	}
	if got := s.Damage(); got == nil || got.Found != d.Found {
		t.Errorf("Damage() = %+v", got)
	}
	want := "Chopin found damage in its database (chopin.db in " + filepath.Dir(path) + ") and saves no more changes"
	if !strings.HasPrefix(d.Message, want) || !strings.Contains(d.Message, "put the backup in place of chopin.db") {
		t.Errorf("the damage's message:\n%s\nwant it to start %q and say how to restore a backup", d.Message, want)
	}

	// Every write is refused with that message, and nothing is written.
	_, err = s.CreateChannel(ctx, repo.NodeID, "After the damage")
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.StorageUnavailable || fe.Code != "storage-damaged" || fe.Message != "This was not saved. "+d.Message {
		t.Fatalf("a write after the damage: %v", err)
	}
	if _, err := s.AddRepository(ctx, "octo/other", ""); !errors.Is(err, fault.StorageUnavailable) {
		t.Errorf("another write after the damage: %v", err)
	}
	// Reads go on, so what is there can still be seen and copied.
	if _, err := s.RepositoryByName(ctx, "octo", "plans"); err != nil {
		t.Errorf("a read after the damage: %v", err)
	}
	// A second check does not tell again.
	s.Verify(ctx, func(time.Duration) error { return nil })
	if len(told) != 1 {
		t.Errorf("told %d times", len(told))
	}

	// Stopped, it leaves no record of a clean stop: the next start checks
	// the whole file, and refuses it.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".stopped"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a damaged store left a record of a clean stop: %v", err)
	}
	_, err = Open(ctx, path)
	var se *StartupError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "is damaged (SQLite's check found:") {
		t.Fatalf("the next start: %v", err)
	}
}

// A check that is stopped (Chopin quits) ends at its next step without a
// finding.
func TestBackgroundCheckStops(t *testing.T) {
	s := openAt(t, seedStopped(t, 5))
	defer s.Close()
	stop := errors.New("quitting")
	steps := 0
	d, err := s.Verify(context.Background(), func(time.Duration) error { steps++; return stop })
	if d != nil || !errors.Is(err, stop) || steps != 1 {
		t.Fatalf("stopped at the first pause: damage %+v, %v, after %d steps", d, err, steps)
	}
	if s.Damage() != nil {
		t.Fatal("a stopped check left the store damaged")
	}
}

func TestDamageFoundAtStartIsNotRemembered(t *testing.T) {
	path := seedStopped(t, 300)
	storetest.Scribble(t, path, "channels")
	if _, err := Open(context.Background(), path); err == nil {
		t.Fatal("a damaged file opened")
	}
	if _, err := os.Stat(path + ".stopped"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused start left a record of a clean stop: %v", err)
	}
}

// The check holds up no write: between its steps (and during them: each
// is a read transaction, which WAL lets writes pass) edits commit.
func TestBackgroundCheckLetsWritesThrough(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, seedStopped(t, 50))
	defer s.Close()
	repo, err := s.RepositoryByName(ctx, "octo", "plans")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for i := range 200 {
			if _, err := s.CreateChannel(ctx, repo.NodeID, fmt.Sprintf("Written during the check %d", i)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	written := 0
	d, err := s.Verify(ctx, func(time.Duration) error {
		written++
		_, err := s.CreateChannel(ctx, repo.NodeID, fmt.Sprintf("Written between steps %d", written))
		return err
	})
	if d != nil || err != nil {
		t.Fatalf("the check: damage %+v, %v", d, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a write beside the check: %v", err)
	}
}
