//go:build !windows

package app

import "syscall"

// raiseFileLimit raises the soft limit on open files to the hard limit (Go
// does so at start on most systems; this makes it certain) and returns the
// limit now in force.
func raiseFileLimit() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = min(lim.Max, 1<<20)
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			lim = want
		}
	}
	return int(min(lim.Cur, 1<<20))
}
