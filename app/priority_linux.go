package app

import (
	"runtime"
	"syscall"
)

// lowerPriority gives the calling goroutine a thread of its own at the
// lowest CPU priority (nice 19) and the idle disk class, which Linux keeps
// per thread. The goroutine stays locked to the thread, so the thread ends
// with it and no other goroutine ever runs at that priority.
func lowerPriority() {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19)
	const ioprioWhoProcess, ioprioClassIdle, ioprioClassShift = 1, 3, 13
	_, _, _ = syscall.Syscall(syscall.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid), ioprioClassIdle<<ioprioClassShift)
}
