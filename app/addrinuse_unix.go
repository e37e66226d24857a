//go:build !windows

package app

import "syscall"

var errAddrInUse error = syscall.EADDRINUSE
