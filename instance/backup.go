package instance

// The last backup: when one was last made of a data directory's database,
// and where `chopin backup` wrote it, so the About page and `chopin status`
// can say how old the newest copy is. The server records a download of GET
// /api/backup once every byte was sent; `chopin backup` records the file it
// wrote. The record is a small JSON file beside the database, written to
// a temporary name and renamed, so a reader never sees half of one.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

const lastBackupFile = "last-backup.json"

// Backup is the record of the last backup made.
type Backup struct {
	At   time.Time `json:"at"`
	File string    `json:"file,omitempty"` // where chopin backup wrote it; empty for a download
}

// RecordBackup writes b as the last backup of dataDir.
func RecordBackup(dataDir string, b Backup) error {
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dataDir, ".last-backup-*")
	if err != nil {
		return fmt.Errorf("record the backup: %w", err)
	}
	defer os.Remove(tmp.Name()) // harmless once renamed
	_, err = tmp.Write(raw)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dataDir, lastBackupFile))
	}
	if err != nil {
		return fmt.Errorf("record the backup: %w", err)
	}
	return nil
}

// LastBackup is the last backup recorded for dataDir; ok is false when none
// was (or the record cannot be read, which is said the same way: no backup
// that Chopin knows of).
func LastBackup(dataDir string) (b Backup, ok bool, err error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, lastBackupFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Backup{}, false, nil
	}
	if err != nil {
		return Backup{}, false, err
	}
	if json.Unmarshal(raw, &b) != nil || b.At.IsZero() {
		return Backup{}, false, nil
	}
	return b, true, nil
}
