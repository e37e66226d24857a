package config

// What --help says of the settings, and the global flags every command
// takes: both read from the settings table, so a setting is described and
// parsed in one place.

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// FlagsHelp lists the global flags, for every command's --help.
func FlagsHelp() string {
	var rows []*setting
	for i := range settings {
		if settings[i].flag != "" {
			rows = append(rows, &settings[i])
		}
	}
	slices.SortFunc(rows, func(a, b *setting) int { return strings.Compare(a.flag, b.flag) })
	var b strings.Builder
	b.WriteString("\nFlags, for every command (they win over the environment and chopin.toml):\n")
	for _, s := range rows {
		where := s.env
		if where == "" {
			where = s.defaultHelp()
		}
		fmt.Fprintf(&b, "  %-15s  %s (%s)\n", "--"+s.flag+" "+s.flagArg, s.allowed(), where)
	}
	return b.String()
}

// EnvironmentHelp lists every environment variable a person may set with
// what it allows and its default, for chopin --help. A setting whose only
// supported value is its default (AUTH_MODE, HARNESS) is left out: nobody
// sets it, though Load still reads and checks it.
func EnvironmentHelp() string {
	width := 0
	for _, s := range settings {
		width = max(width, len(s.env))
	}
	var b strings.Builder
	b.WriteString("\nEnvironment (wins over chopin.toml; chopin.toml.example explains each):\n")
	for _, s := range settings {
		if s.env == "" || s.kind == onlySetting {
			continue
		}
		line := s.allowed()
		if d := s.defaultHelp(); d != "" {
			line += " (" + d + ")"
		}
		fmt.Fprintf(&b, "  %-*s  %s\n", width, s.env, line)
	}
	return b.String()
}

// RegisterFlags adds the global flags to fs, keeping their values in flags
// as text: Load checks them as it checks the environment.
func RegisterFlags(fs *flag.FlagSet, flags *Flags) {
	for _, s := range settings {
		if s.flag == "" {
			continue
		}
		dst := s.flagValue(flags)
		fs.Func(s.flag, "", func(v string) error {
			if v == "" {
				return errors.New("needs a value")
			}
			*dst = v
			return nil
		})
	}
}
