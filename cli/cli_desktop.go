package cli

// chopin desktop-entry: puts Chopin in a Linux desktop's application menu,
// following the freedesktop.org Desktop Entry and Icon Theme
// specifications: chopin.desktop in $XDG_DATA_HOME/applications, and the
// icon embedded in the binary (the UI's favicon too) written beside the
// user's icons, named by its absolute path so no icon cache needs updating.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"github.com/chopin-desktop/chopin/assets"
	"github.com/chopin-desktop/chopin/config"
)

const desktopEntryUsage = `Usage: chopin desktop-entry [--print]

Adds Chopin to the application menu of a Linux desktop (GNOME, KDE, Xfce
and others): writes chopin.desktop to ~/.local/share/applications and
Chopin's icon to ~/.local/share/icons (under $XDG_DATA_HOME when set).
The entry starts this chopin, at its current path; run the command again
after moving it.

  --print          print the entry instead of writing anything
`

func setupDesktopEntry(fs *flag.FlagSet) func(context.Context, *CLI, config.Flags) int {
	printOnly := fs.Bool("print", false, "")
	return func(_ context.Context, c *CLI, _ config.Flags) int {
		if err := c.desktopEntry(*printOnly); err != nil {
			fmt.Fprintf(c.Stderr, "chopin desktop-entry: %v\n", err)
			return exitError
		}
		return exitOK
	}
}

func (c *CLI) desktopEntry(printOnly bool) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot tell where this chopin is: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if TemporaryBuild(exe) {
		return fmt.Errorf("this chopin is %s, a temporary build that `go run` deletes when it exits, so the menu entry would start nothing; "+
			"build one that stays (go build -o chopin .) and run ./chopin desktop-entry", exe)
	}
	base := xdg.DataHome
	if v := c.getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		base = v
	}
	icon := filepath.Join(base, "icons", "hicolor", "scalable", "apps", "chopin-desktop.svg")
	entry := desktopFile(exe, icon)
	if printOnly {
		fmt.Fprint(c.Stdout, entry)
		return nil
	}
	file := filepath.Join(base, "applications", "chopin.desktop")
	for path, data := range map[string][]byte{icon: assets.Icon, file: []byte(entry)} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		// Replaced when there, as the help says; the menu reads them, so
		// they are readable by all.
		err := writeNamedFile(path, true, 0o644, func(partial string) error {
			return os.WriteFile(partial, data, 0o644)
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(c.Stdout, "Added Chopin to the application menu:\n  %s\n  %s\nIt starts %s.\n", file, icon, exe)
	return nil
}

// TemporaryBuild reports whether exe is a binary `go run` built: it lives
// in the Go build cache's scratch folder (go-build.../exe/) and is deleted
// when the command ends, so nothing may point at it.
func TemporaryBuild(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// desktopFile is the Desktop Entry for exe. Exec quotes the path as the
// specification says: inside double quotes, backslash before ", `, $ and \.
func desktopFile(exe, icon string) string {
	quoted := strings.NewReplacer(`\`, `\\\\`, `"`, `\\"`, "`", "\\\\`", `$`, `\\$`, `%`, `%%`).Replace(exe)
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Version=1.5\n" +
		"Name=Chopin\n" +
		"GenericName=Plan writer\n" +
		"Comment=Write plans with an AI Planner, on your own computer\n" +
		"Exec=\"" + quoted + "\"\n" +
		"Icon=" + icon + "\n" +
		"Terminal=false\n" +
		"Categories=Development;Office;\n" +
		"Keywords=plan;spec;RFC;planner;markdown;\n" +
		"StartupNotify=false\n"
}

// getenv is c.Getenv, or nothing.
func (c *CLI) getenv(key string) string {
	if c.Getenv == nil {
		return ""
	}
	return c.Getenv(key)
}
