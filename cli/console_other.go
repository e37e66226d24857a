//go:build !windows

package cli

// Only Windows separates console programs from windowed ones; elsewhere a
// program started from a terminal writes to it and one started from a
// desktop launcher writes nowhere visible.

// AttachParentConsole does nothing outside Windows.
func AttachParentConsole() {}
