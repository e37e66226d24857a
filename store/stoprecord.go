package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The record of a clean stop: what lets a start skip reading the whole
// file. SQLite's quick_check reads every page, so a start that ran it
// every time grew with the database (seconds for a year of Chat and
// pictures). The check is there for a file a crash, a failing disk or
// another program may have left wrong; a file Chopin itself closed
// cleanly, unchanged since, is the file it last wrote and checked.
//
// Close writes chopin.db.stopped once both pools are closed (SQLite has
// copied the write-ahead log into the file and removed it): the file's
// size, modification and change times and inode, and when the whole file
// was last checked and found sound. Open reads it and removes it before
// SQLite touches the file. The start skips the whole check only when the
// record is there and the file is exactly as it says, with no
// write-ahead log holding anything. A crash leaves no record (it was
// removed at start), or a stale one that no longer matches: a running
// Chopin has a write-ahead log beside the file, and any write changes the
// file's times. A file restored from a backup, copied over or written by
// another program has other times or another inode, and is checked whole.
// Damage that comes while the file sits unchanged (a disk's decay) is the
// background check's to find (verify.go).

// stopRecordSuffix names the record beside the database file.
const stopRecordSuffix = ".stopped"

// stopRecord is the file's state at a clean stop.
type stopRecord struct {
	File fileStamp `json:"file"`
	// Checked is when the whole file was last checked and found sound
	// (Unix ms), at a start or in the background; 0 if never.
	Checked int64 `json:"checked"`
}

// fileStamp is what changes when anything writes to or replaces a file.
// Change time and inode are read where the system gives them (stamp_*.go).
type fileStamp struct {
	Size     int64  `json:"size"`
	Modified int64  `json:"modified"` // ns
	Changed  int64  `json:"changed"`  // ns, the inode's change time; 0 where unknown
	Inode    uint64 `json:"inode"`    // 0 where unknown
}

func stampOf(fi fs.FileInfo) fileStamp {
	st := fileStamp{Size: fi.Size(), Modified: fi.ModTime().UnixNano()}
	st.Changed, st.Inode = changeStamp(fi)
	return st
}

// takeStopRecord reads and removes the record of the last clean stop, and
// says whether the file at path is still as that stop left it; when not,
// why, in words for the log.
func takeStopRecord(path string) (rec stopRecord, clean bool, why string) {
	raw, err := os.ReadFile(path + stopRecordSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return stopRecord{}, false, "Chopin did not stop cleanly last time (or this is its first start)"
	}
	// Removed whatever it holds: from here on, only the next clean stop
	// may say the file is sound.
	removeErr := os.Remove(path + stopRecordSuffix)
	switch {
	case err != nil:
		return stopRecord{}, false, fmt.Sprintf("the record of the last stop could not be read (%v)", err)
	case json.Unmarshal(raw, &rec) != nil:
		return stopRecord{}, false, "the record of the last stop is not whole"
	case removeErr != nil:
		return rec, false, fmt.Sprintf("the record of the last stop could not be removed (%v)", removeErr)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return rec, false, fmt.Sprintf("the database file could not be read (%v)", err)
	}
	if stampOf(fi) != rec.File {
		return rec, false, "the database file changed since Chopin stopped"
	}
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return rec, false, "a write-ahead log holds changes the last stop did not copy into the file"
	}
	return rec, true, ""
}

// writeStopRecord records a clean stop of the closed database at path. A
// record that cannot be written costs the next start the whole check,
// nothing more; one cut short by a power failure does not parse and costs
// the same.
func writeStopRecord(path string, checked time.Time) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return errors.New("the write-ahead log was not emptied")
	}
	rec := stopRecord{File: stampOf(fi)}
	if !checked.IsZero() {
		rec.Checked = checked.UnixMilli()
	}
	raw, _ := json.Marshal(rec)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+stopRecordSuffix+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(raw)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path+stopRecordSuffix)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Opening is how the database was opened: whether the whole file was
// checked and why, and how long each step took, for the start-up's log.
type Opening struct {
	FullCheck bool   // SQLite's quick_check read the whole file
	Why       string // why it had to; "" when it did not
	Steps     []Step // in order
	last      time.Time
}

// Step is one timed step of a start.
type Step struct {
	Name string
	Took time.Duration
}

// step ends the step called name: it took the time since the last one.
func (o *Opening) step(name string) {
	now := time.Now()
	o.Steps = append(o.Steps, Step{Name: name, Took: now.Sub(o.last)})
	o.last = now
}

// Opening says how the database was opened.
func (s *Store) Opening() Opening { return s.opening }
