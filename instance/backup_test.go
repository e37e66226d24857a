package instance

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLastBackupRecorded(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := LastBackup(dir); ok || err != nil {
		t.Fatalf("a fresh data directory has a last backup: ok=%v err=%v", ok, err)
	}
	at := time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)
	if err := RecordBackup(dir, Backup{At: at, File: "/home/ada/chopin.db"}); err != nil {
		t.Fatal(err)
	}
	b, ok, err := LastBackup(dir)
	if err != nil || !ok || !b.At.Equal(at) || b.File != "/home/ada/chopin.db" {
		t.Fatalf("LastBackup = %+v, %v, %v", b, ok, err)
	}
	later := at.Add(time.Hour)
	if err := RecordBackup(dir, Backup{At: later}); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := LastBackup(dir); !b.At.Equal(later) || b.File != "" {
		t.Fatalf("the second record did not replace the first: %+v", b)
	}
	// Nothing is left behind but the record itself.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != lastBackupFile {
		t.Fatalf("data directory holds %v", entries)
	}
	// A damaged record reads as none.
	os.WriteFile(filepath.Join(dir, lastBackupFile), []byte("{not json"), 0o600)
	if _, ok, err := LastBackup(dir); ok || err != nil {
		t.Fatalf("a damaged record reads as a backup: ok=%v err=%v", ok, err)
	}
}
