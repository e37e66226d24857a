package wire

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
	"unicode/utf8"
)

// Limits of the messages a client sends. Shapes are already checked; these
// are the lengths, counts and enumerations of "Frames" and the message
// sections.

func (m *Attach) validate() error {
	if m.Document == "" {
		return errors.New("document is empty")
	}
	var errs []error
	errs = append(errs, checkMax("document", m.Document, maxDocumentRef))
	if c := m.Checkout; c != nil {
		errs = append(errs, checkMax("checkout.origin", c.Origin, maxCheckoutOrigin),
			checkMax("checkout.branch", c.Branch, maxCheckoutBranch),
			checkMax("checkout.head", c.Head, maxCheckoutHead))
	}
	return errors.Join(errs...)
}

func (m *Started) validate() error { return checkID("session", m.Session) }

func (m *StartFailed) validate() error {
	return errors.Join(checkID("session", m.Session), checkNote("message", m.Message))
}

func (m *Tools) validate() error {
	errs := []error{checkID("session", m.Session), checkID("turn", m.Turn)}
	if len(m.Names) > MaxTools {
		errs = append(errs, fmt.Errorf("names lists %d tools; at most %d", len(m.Names), MaxTools))
	}
	for i, n := range m.Names {
		errs = append(errs, checkName(fmt.Sprintf("names[%d]", i), n))
	}
	return errors.Join(errs...)
}

func (m *Part) validate() error {
	return errors.Join(checkID("session", m.Session), checkID("turn", m.Turn), m.Part.validate())
}

func (m *HostToolCall) validate() error {
	return errors.Join(checkID("session", m.Session), checkID("turn", m.Turn),
		checkID("toolCallId", m.ToolCallID), checkName("toolName", m.ToolName))
}

var turnEndStatuses = set("finished", "failed", "aborted")

func (m *TurnEnd) validate() error {
	errs := []error{checkID("session", m.Session), checkID("turn", m.Turn), checkNote("message", m.Message)}
	if !turnEndStatuses[m.Status] {
		errs = append(errs, fmt.Errorf("status %q is not finished, failed or aborted", m.Status))
	}
	return errors.Join(errs...)
}

var digestPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

func (m *InputRequest) validate() error {
	errs := []error{checkID("request", m.Request), checkID("session", m.Session)}
	for _, f := range []struct{ name, v string }{
		{"workflowRunId", m.WorkflowRunID}, {"workflowStageId", m.WorkflowStageID}, {"rootRunId", m.RootRunID},
	} {
		if f.v != "" {
			errs = append(errs, checkID(f.name, f.v))
		}
	}
	if b := m.Block; b != nil {
		if b.Index < 0 {
			errs = append(errs, errors.New("block.index is negative"))
		}
		if !digestPattern().MatchString(b.Digest) {
			errs = append(errs, errors.New(`block.digest is not "sha256:" and 64 lowercase hex digits`))
		}
	}
	errs = append(errs, m.Input.validate())
	return errors.Join(errs...)
}

func (m *InputCancel) validate() error { return checkID("request", m.Request) }

func (m *ControlResult) validate() error {
	return errors.Join(checkID("request", m.Request), checkNote("message", m.Message))
}

// CheckTools checks the host tools a turn offers against the spec's limits:
// how many, their names and their descriptions.
func CheckTools(tools []Tool) error {
	if len(tools) > MaxTools {
		return fmt.Errorf("a turn offers at most %d tools, not %d", MaxTools, len(tools))
	}
	for _, t := range tools {
		if err := checkName("tool name", t.Name); err != nil {
			return err
		}
		if err := checkMax("description of "+t.Name, t.Description, maxToolDescription); err != nil {
			return err
		}
	}
	return nil
}

func checkID(field, v string) error { return checkRange(field, v, 1, MaxIDChars) }

func checkName(field, v string) error { return checkRange(field, v, 1, MaxNameChars) }

func checkShort(field, v string) error { return checkMax(field, v, MaxShortChars) }

func checkNote(field, v string) error { return checkMax(field, v, MaxNoteChars) }

func checkMax(field, v string, limit int) error { return checkRange(field, v, 0, limit) }

func checkRange(field, v string, lo, hi int) error {
	// len(v) bounds the rune count from above: skip counting short strings.
	if len(v) >= lo && len(v) <= hi {
		return nil
	}
	n := runeCount(v)
	switch {
	case n < lo && lo == 1:
		return fmt.Errorf("%s is empty", field)
	case n < lo || n > hi:
		return fmt.Errorf("%s has %d characters; the limit is %d to %d", field, n, lo, hi)
	}
	return nil
}

func checkIDs(field string, ids []string, limit int) error {
	if len(ids) > limit {
		return fmt.Errorf("%s lists %d ids; at most %d", field, len(ids), limit)
	}
	for i, id := range ids {
		if err := checkID(fmt.Sprintf("%s[%d]", field, i), id); err != nil {
			return err
		}
	}
	return nil
}

func runeCount(s string) int { return utf8.RuneCountInString(s) }

// truncateRunes cuts s to at most n characters.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
