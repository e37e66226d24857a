//go:build !linux

package app

import "runtime"

// lowerPriority gives the calling goroutine a thread of its own, which
// ends with it. (Other systems give a priority to the whole process, not
// to a thread: the check's rests between tables are what keep it light.)
func lowerPriority() { runtime.LockOSThread() }
