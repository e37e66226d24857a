//go:build unix

package cli

import (
	"os"
	"syscall"
)

// openNoWait keeps an open of a named pipe from waiting for its writer.
const openNoWait = syscall.O_NONBLOCK

// syncDir flushes a folder's entries to disk, so a file just renamed into
// it survives a power cut. Best effort: the file itself is already safe.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
