//go:build !linux && !darwin

package store

import "io/fs"

// changeStamp is unknown here (Windows gives no inode change time through
// os.Stat): the size and modification time stand alone.
func changeStamp(fs.FileInfo) (int64, uint64) { return 0, 0 }
