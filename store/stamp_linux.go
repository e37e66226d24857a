package store

import (
	"io/fs"
	"syscall"
)

// changeStamp is the file's inode change time (ns) and inode number: the
// change time moves with every write, rename or permission change and no
// program can set it back, so a file replaced by one with the same size
// and modification time is still told apart.
func changeStamp(fi fs.FileInfo) (int64, uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return st.Ctim.Nano(), st.Ino
}
