package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// browserWait is how long OpenBrowser waits to hear that the browser command
// failed. Openers such as xdg-open and open hand the URL over and exit at
// once; a browser named in BROWSER may instead stay in the foreground, and
// is then left running.
var browserWait = 3 * time.Second

// OpenBrowser opens url in the person's browser: the commands in BROWSER
// (separated by the platform's path list separator, each with %s standing
// for the URL or the URL appended), else the platform's opener (xdg-open,
// open, or rundll32 url.dll,FileProtocolHandler). It returns within
// browserWait; an error means no browser was seen to open, and the caller
// should show the link instead. The browser is not a child it waits for.
func OpenBrowser(url string) error {
	var errs []error
	for _, argv := range browserCommands(url, os.Getenv("BROWSER")) {
		err := runOpener(argv)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", argv[0], err))
	}
	return fmt.Errorf("open the browser: %w", errors.Join(errs...))
}

// browserCommands lists the commands to try, in order.
func browserCommands(url, browserEnv string) [][]string {
	var cmds [][]string
	for _, entry := range strings.Split(browserEnv, string(os.PathListSeparator)) {
		fields := strings.Fields(entry)
		if len(fields) == 0 {
			continue
		}
		substituted := false
		for i, f := range fields {
			if strings.Contains(f, "%s") {
				fields[i] = strings.ReplaceAll(f, "%s", url)
				substituted = true
			}
		}
		if !substituted {
			fields = append(fields, url)
		}
		cmds = append(cmds, fields)
	}
	switch runtime.GOOS {
	case "darwin":
		cmds = append(cmds, []string{"open", url})
	case "windows":
		cmds = append(cmds, []string{"rundll32", "url.dll,FileProtocolHandler", url})
	default:
		cmds = append(cmds, []string{"xdg-open", url})
	}
	return cmds
}

// runOpener starts argv and reports a failure it sees within browserWait.
func runOpener(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	// Keep the opener's chatter out of Chopin's own output.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }() // reaps it whenever it exits
	select {
	case err := <-done:
		return err
	case <-time.After(browserWait):
		return nil
	}
}
