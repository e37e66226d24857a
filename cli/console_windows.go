package cli

// Windows builds of a release are GUI-subsystem programs (linked with
// -H=windowsgui, see scripts/release.sh), so a double-click on chopin.exe
// opens the browser without a console window appearing next to it. Run
// from a terminal, such a program has no standard output of its own: it
// attaches to the console of the shell that started it, the approach
// Microsoft documents for programs that are both ("AttachConsole",
// ATTACH_PARENT_PROCESS).

import (
	"os"
	"path/filepath"
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
// it is; started by a double-click there is no parent console, and the
// output goes to %LocalAppData%\chopin\chopin.log. A console-subsystem build has its console already and is left
// alone too.
func AttachParentConsole() {
	out, _ := syscall.GetStdHandle(syscall.STD_OUTPUT_HANDLE)
	errOut, _ := syscall.GetStdHandle(syscall.STD_ERROR_HANDLE)
	if out != 0 && out != syscall.InvalidHandle && errOut != 0 && errOut != syscall.InvalidHandle {
		return
	}
	if ok, _, _ := attachConsole.Call(attachParentProcess); ok == 0 {
		// No parent console: started from Explorer. What Chopin would
		// print (where it serves, why it could not start) goes to a log
		// file a person can open instead of nowhere.
		logToFile()
		return
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

// logToFile sends standard output and error to chopin.log in
// %LocalAppData%\chopin, appending, so the last start's lines are at its end.
func logToFile() {
	dir, err := os.UserCacheDir()
	if err != nil {
		return
	}
	dir = filepath.Join(dir, "chopin")
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "chopin.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	os.Stdout, os.Stderr = f, f
}
