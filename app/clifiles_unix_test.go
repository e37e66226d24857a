//go:build unix

package app

import (
	"os"
	"syscall"
)

func makeFIFO(path string) error { return syscall.Mkfifo(path, 0o600) }

// makeDevice makes a node for the device /dev/null is (1, 3 on Linux),
// where the test can make one (as root): never /dev/null itself.
func makeDevice(path string) error {
	fi, err := os.Stat("/dev/null")
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return os.ErrInvalid
	}
	return syscall.Mknod(path, syscall.S_IFCHR|0o666, int(st.Rdev))
}
