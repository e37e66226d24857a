package config

// Tests of the settings table: that it is well formed, and that what a
// person reads about the settings (chopin.toml.example, --help) says what
// the table says.

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSettingsTableIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	pingSeen := false
	for _, s := range settings {
		name := s.name()
		for _, id := range []string{"env " + s.env, "key " + s.key, "flag " + s.flag} {
			if !strings.HasSuffix(id, " ") && seen[id] {
				t.Errorf("%s: %s is in the table twice", name, id)
			}
			seen[id] = true
		}
		if (s.flag != "") != (s.flagValue != nil) || (s.flag != "") != (s.flagArg != "") {
			t.Errorf("%s: a flag needs flagValue and flagArg, and only a flag has them", name)
		}
		if s.key != "" && (s.apply == nil || s.doc == "") {
			t.Errorf("%s: a chopin.toml key needs apply, to be loaded, and doc, for chopin.toml.example", name)
		}
		if s.env == "" && s.key == "" && s.flag == "" {
			t.Errorf("a row has no environment variable, key or flag")
		}
		switch s.kind {
		case numberSetting:
			if s.noun == "" || s.min > s.defNumber || s.defNumber > s.max {
				t.Errorf("%s: a number needs a noun and a default from %d to %d, not %d", name, s.min, s.max, s.defNumber)
			}
			// The explanation states the range; it must be the table's.
			if r := fmt.Sprintf("%d to %d", s.min, s.max); s.key != "" && !strings.Contains(s.doc, r) {
				t.Errorf("%s: doc does not give the range %s:\n%s", name, r, s.doc)
			}
		case onlySetting:
			if s.defText == "" {
				t.Errorf("%s: a setting with one supported value needs it as its default", name)
			}
		}
		if s.env == envPing {
			pingSeen = true
		}
		if s.abovePing && !pingSeen {
			t.Errorf("%s: must come after %s in the table, which it is compared with", name, envPing)
		}
	}
}

// exampleKey is a key chopin.toml.example documents: the value it shows
// and the comment paragraph above it, joined into one line.
type exampleKey struct {
	key, value, comment string
	line                int
}

// readExample reads the keys of chopin.toml.example, and the keys of its
// examples of arrays of tables ([[repository]], [[acp_agent]]), by table.
func readExample(t *testing.T) (keys []exampleKey, arrays map[string][]string) {
	t.Helper()
	b, err := os.ReadFile("../chopin.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	var (
		keyLine    = regexp.MustCompile(`^# ([a-z_]+) = (.*)$`)
		tableLine  = regexp.MustCompile(`^\[([a-z_]+)\]$`)
		arrayTable = regexp.MustCompile(`^# \[\[([a-z_]+)\]\]$`)
		table      string
		inArray    string
		paragraph  []string
	)
	arrays = map[string][]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if m := arrayTable.FindStringSubmatch(line); m != nil {
			inArray = m[1]
			continue
		}
		if m := tableLine.FindStringSubmatch(line); m != nil {
			table, paragraph = m[1]+".", nil
			continue
		}
		m := keyLine.FindStringSubmatch(line)
		switch {
		case m != nil && inArray != "":
			arrays[inArray] = append(arrays[inArray], m[1])
		case m != nil:
			keys = append(keys, exampleKey{key: table + m[1], value: m[2], comment: strings.Join(paragraph, " "), line: i + 1})
			paragraph = nil
		case strings.HasPrefix(line, "# "):
			paragraph = append(paragraph, strings.TrimPrefix(line, "# "))
		default:
			paragraph = nil
		}
	}
	return keys, arrays
}

// exampleComment is what chopin.toml.example says above a key: its
// environment variable and flag, if any, then the setting's doc.
func (s *setting) exampleComment() string {
	switch {
	case s.env != "" && s.flag != "":
		return fmt.Sprintf("%s (flag --%s). %s", s.env, s.flag, s.doc)
	case s.env != "":
		return s.env + ". " + s.doc
	}
	return s.doc
}

// wrapComment wraps text as comment lines of at most 80 columns, for a
// message that shows what to write.
func wrapComment(text string) string {
	var b, line strings.Builder
	for _, word := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(word) > 78 {
			b.WriteString("# " + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	b.WriteString("# " + line.String())
	return b.String()
}

// chopin.toml.example documents every key of the table, with its default
// and its explanation, and no other key.
func TestSettingsExampleMatchesTable(t *testing.T) {
	keys, arrays := readExample(t)
	documented := map[string]exampleKey{}
	for _, k := range keys {
		if _, twice := documented[k.key]; twice {
			t.Errorf("chopin.toml.example:%d: %s is documented twice", k.line, k.key)
		}
		documented[k.key] = k
	}
	known := map[string]bool{}
	for i := range settings {
		s := &settings[i]
		if s.key == "" {
			continue
		}
		known[s.key] = true
		k, ok := documented[s.key]
		if !ok {
			t.Errorf("chopin.toml.example does not document %s; add:\n%s\n# %s = %s", s.key, wrapComment(s.exampleComment()), lastKeyPart(s.key), s.exampleValue())
			continue
		}
		if k.value != s.exampleValue() {
			t.Errorf("chopin.toml.example:%d: %s = %s, want %s", k.line, lastKeyPart(s.key), k.value, s.exampleValue())
		}
		if k.comment != s.exampleComment() {
			t.Errorf("chopin.toml.example:%d: the comment above %s is\n%s\nwant, as the settings table says,\n%s",
				k.line, s.key, wrapComment(k.comment), wrapComment(s.exampleComment()))
		}
	}
	for _, k := range keys {
		if !known[k.key] {
			t.Errorf("chopin.toml.example:%d: documents %s, which is not in the settings table", k.line, k.key)
		}
	}

	for table, typ := range map[string]reflect.Type{"repository": reflect.TypeFor[fileRepository](), "acp_agent": reflect.TypeFor[fileAgent]()} {
		var want []string
		for f := range typ.Fields() {
			want = append(want, f.Tag.Get("toml"))
		}
		if !slices.Equal(arrays[table], want) {
			t.Errorf("chopin.toml.example's [[%s]] has the keys %q, want %q", table, arrays[table], want)
		}
	}
}

// --help lists every environment variable a person may set, with its range
// and default, and every global flag.
func TestHelpListsEverySetting(t *testing.T) {
	help := FlagsHelp() + EnvironmentHelp()
	lines := strings.Split(help, "\n")
	find := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Errorf("--help has no line starting %q:\n%s", prefix, help)
		return ""
	}
	for _, s := range settings {
		if s.flag != "" {
			find("  --" + s.flag + " " + s.flagArg + " ")
		}
		if s.env == "" {
			continue
		}
		if s.kind == onlySetting {
			// Nobody sets a setting whose only value is its default:
			// --help leaves it out; it is still read and checked.
			if strings.Contains(help, s.env) {
				t.Errorf("--help lists %s, which has only the value %q", s.env, s.defText)
			}
			continue
		}
		line := find("  " + s.env + " ")
		if s.kind == numberSetting {
			for _, part := range []string{fmt.Sprintf(" %d to %d", s.min, s.max), fmt.Sprintf("(default %d)", s.defNumber)} {
				if !strings.Contains(line, part) {
					t.Errorf("--help lists %s as %q, without %q", s.env, line, part)
				}
			}
		}
	}
}
