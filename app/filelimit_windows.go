//go:build windows

package app

// raiseFileLimit is the number of connections Windows lets a process hold
// comfortably; it has no per-process file limit to raise.
func raiseFileLimit() int { return 8192 }
