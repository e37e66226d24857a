package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// One data directory, one Chopin. The first process takes an exclusive lock
// on a file in the data directory and records the origin it serves; a second
// one finds that record and sends the person to the running instance. The
// lock belongs to the open file, so the operating system drops it when the
// process ends however it ends, kill -9 included: there is no stale lock to
// clean up, only a stale record, which is never trusted without the lock.

const (
	instanceLockFile   = "chopin.lock"   // locked while a process runs; holds its pid
	instanceRecordFile = "instance.json" // the running process's origin and pid
)

var (
	// ErrAlreadyRunning is matched (errors.Is) by an *AlreadyRunningError.
	ErrAlreadyRunning = errors.New("Chopin is already running")
	// ErrNotRunning is returned by Find when no process holds the lock.
	ErrNotRunning = errors.New("Chopin is not running")

	// errLocked is what the platform's lockFile returns when the lock is held.
	errLocked = errors.New("instance lock is held")
)

// AlreadyRunningError says that another live process holds the data
// directory. Origin is empty while that process is still starting, before it
// has bound its port.
type AlreadyRunningError struct {
	DataDir string
	Record
}

func (e *AlreadyRunningError) Error() string {
	if e.Origin == "" {
		return fmt.Sprintf("Chopin is already running with the data directory %s (process %d) and is still starting", e.DataDir, e.PID)
	}
	return fmt.Sprintf("Chopin is already running at %s (process %d)", e.Origin, e.PID)
}

func (e *AlreadyRunningError) Is(target error) bool { return target == ErrAlreadyRunning }

// Record is what a running process says about itself.
type Record struct {
	Origin string `json:"origin"` // such as http://127.0.0.1:8787
	PID    int    `json:"pid"`    // 0 when unknown
}

// Lock is the held lock of a data directory.
type Lock struct {
	dir string

	mu   sync.Mutex
	lock *os.File // nil once released
}

// Acquire takes the data directory's lock, creating the directory if
// needed. When another live process holds it, the error is an
// *AlreadyRunningError with what that process recorded.
func Acquire(dataDir string) (*Lock, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create the data directory: %w", err)
	}
	lock, err := lockFile(filepath.Join(dataDir, instanceLockFile))
	if errors.Is(err, errLocked) {
		return nil, &AlreadyRunningError{DataDir: dataDir, Record: readRecord(dataDir)}
	}
	if err != nil {
		return nil, fmt.Errorf("lock the data directory %s: %w", dataDir, err)
	}
	// A record left by a process that died is stale now; remove it before
	// anyone reads it, and say who holds the lock in the meantime.
	if err := os.Remove(filepath.Join(dataDir, instanceRecordFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		lock.Close()
		return nil, fmt.Errorf("remove the previous instance record: %w", err)
	}
	if err := lock.Truncate(0); err == nil {
		lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{dir: dataDir, lock: lock}, nil
}

// Record publishes the origin this process serves, for a second process to
// find. Call it once the listener is bound.
func (i *Lock) Record(origin string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.lock == nil {
		return errors.New("record the instance: the lock was released")
	}
	b, err := json.Marshal(Record{Origin: origin, PID: os.Getpid()})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(i.dir, ".instance-*.json")
	if err != nil {
		return fmt.Errorf("record the instance: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(i.dir, instanceRecordFile))
	}
	if err != nil {
		return fmt.Errorf("record the instance: %w", err)
	}
	return nil
}

// Release removes the record and drops the lock. It is safe to call more
// than once.
func (i *Lock) Release() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.lock == nil {
		return nil
	}
	err := os.Remove(filepath.Join(i.dir, instanceRecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	// The lock file itself stays: removing it would let a process that has
	// just opened it lock a file nobody else can find any more.
	err = errors.Join(err, i.lock.Close())
	i.lock = nil
	if err != nil {
		return fmt.Errorf("release the instance lock: %w", err)
	}
	return nil
}

// Find reports the process that holds dataDir's lock, or
// ErrNotRunning. It creates nothing. The record's Origin is empty while that
// process is still starting.
func Find(dataDir string) (Record, error) {
	if _, err := os.Stat(filepath.Join(dataDir, instanceLockFile)); errors.Is(err, fs.ErrNotExist) {
		return Record{}, ErrNotRunning
	}
	inst, err := Acquire(dataDir)
	var running *AlreadyRunningError
	switch {
	case errors.As(err, &running):
		return running.Record, nil
	case err != nil:
		return Record{}, err
	}
	// Nobody holds it. Let go at once, leaving the directory as it was.
	inst.mu.Lock()
	defer inst.mu.Unlock()
	inst.lock.Close()
	inst.lock = nil
	return Record{}, ErrNotRunning
}

// readRecord reads what the lock's holder says about itself. The pid
// in the lock file is written as soon as the lock is taken; the record is
// trusted only when it names the same pid, since one left by a process that
// died would send the person to a dead origin.
func readRecord(dataDir string) Record {
	var holder int
	if b, err := os.ReadFile(filepath.Join(dataDir, instanceLockFile)); err == nil {
		holder, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	var rec Record
	b, err := os.ReadFile(filepath.Join(dataDir, instanceRecordFile))
	if err != nil || json.Unmarshal(b, &rec) != nil || (holder != 0 && rec.PID != holder) {
		return Record{PID: holder}
	}
	return rec
}

// RanBefore reports whether a Chopin ever ran with dataDir: its lock file
// is there, held or not. The server then insists on finding its database.
func RanBefore(dataDir string) bool {
	_, err := os.Stat(filepath.Join(dataDir, instanceLockFile))
	return err == nil
}
