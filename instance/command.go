package instance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Command is how a person's terminal runs this very program: "chopin" when
// the PATH's chopin is this file, else its full path (quoted for a POSIX
// shell when it holds a space or a quote), so that a command the UI or a
// message names runs this Chopin and not another, or none (after go run,
// or a go build that left ./chopin in a checkout).
func Command() string {
	exe, err := os.Executable()
	if err != nil {
		return "chopin"
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if found, err := exec.LookPath("chopin"); err == nil {
		if r, err := filepath.EvalSymlinks(found); err == nil {
			if a, err := filepath.Abs(r); err == nil && a == exe {
				return "chopin"
			}
		}
	}
	if strings.ContainsAny(exe, " '\"") {
		return "'" + strings.ReplaceAll(exe, "'", `'\''`) + "'"
	}
	return exe
}
