package app

// Windows builds of a release are GUI-subsystem programs (linked with
// -H=windowsgui, see scripts/release.sh), so a double-click on chopin.exe
// opens the browser without a console window appearing next to it. Run
// from a terminal, such a program has no standard output of its own: it
// attaches to the console of the shell that started it, the approach
// Microsoft documents for programs that are both ("AttachConsole",
// ATTACH_PARENT_PROCESS).

import (
	"os"
	"syscall"
)

var (
	kernel32      = syscall.NewLazyDLL("kernel32.dll")
	attachConsole = kernel32.NewProc("AttachConsole")
)

// attachParentProcess is ATTACH_PARENT_PROCESS, (DWORD)-1.
const attachParentProcess = ^uintptr(0)

// AttachParentConsole gives a GUI-subsystem chopin the console of the
// terminal it was started from, when there is one, so that its output
// appears there. Output already redirected (to a file, a pipe) is left as
// it is; started by a double-click there is no parent console and nothing
// changes. A console-subsystem build has its console already and is left
// alone too.
func AttachParentConsole() {
	out, _ := syscall.GetStdHandle(syscall.STD_OUTPUT_HANDLE)
	errOut, _ := syscall.GetStdHandle(syscall.STD_ERROR_HANDLE)
	if out != 0 && out != syscall.InvalidHandle && errOut != 0 && errOut != syscall.InvalidHandle {
		return
	}
	if ok, _, _ := attachConsole.Call(attachParentProcess); ok == 0 {
		return // no parent console: started from Explorer
	}
	if out == 0 || out == syscall.InvalidHandle {
		if f, err := os.OpenFile("CONOUT$", os.O_WRONLY, 0); err == nil {
			os.Stdout = f
		}
	}
	if errOut == 0 || errOut == syscall.InvalidHandle {
		if f, err := os.OpenFile("CONOUT$", os.O_WRONLY, 0); err == nil {
			os.Stderr = f
		}
	}
}
