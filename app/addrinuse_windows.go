package app

import "syscall"

// WSAEADDRINUSE
var errAddrInUse error = syscall.Errno(10048)
