package store

import (
	"io/fs"
	"syscall"
)

// changeStamp is the file's inode change time (ns) and inode number (see
// stamp_linux.go).
func changeStamp(fi fs.FileInfo) (int64, uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return st.Ctimespec.Nano(), st.Ino
}
