//go:build unix

package app

// The CPU time the whole process has used, for benchmarks that report the
// CPU an operation costs (the server and its clients share the process).

import (
	"syscall"
	"time"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
