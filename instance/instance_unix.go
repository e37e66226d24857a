//go:build unix

package instance

import (
	"errors"
	"os"
	"syscall"
)

// lockFile opens path and takes an exclusive flock on it without waiting.
// The lock goes with the open file: closing it, or the process ending in any
// way, releases it. Go opens files close-on-exec, so a browser started by
// this process does not inherit it.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f, nil
}
