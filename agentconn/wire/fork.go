package wire

import (
	"errors"
	"fmt"
)

// The fork message of session-forks ("Session forks"): a thread's session
// opened as a branch of an earlier one, so the client need not be sent the
// whole conversation again.

// Fork opens a thread's Planner session branched from From; the client
// answers Started or StartFailed, exactly as for Start.
type Fork struct {
	Session string   `json:"session"`
	Mode    string   `json:"mode"`
	From    ForkFrom `json:"from"`
}

// ForkFrom names the session, and optionally its turn, a fork branches from.
type ForkFrom struct {
	Session string `json:"session"`
	Turn    string `json:"turn,omitempty"`
}

func (Fork) MessageType() string { return "fork" }

func (m *Fork) validate() error {
	errs := []error{checkID("session", m.Session), checkID("from.session", m.From.Session)}
	if m.Mode != ModePlanner && m.Mode != ModeIsolated {
		errs = append(errs, fmt.Errorf("mode %q is not planner or isolated", m.Mode))
	}
	if m.From.Turn != "" {
		errs = append(errs, checkID("from.turn", m.From.Turn))
	}
	return errors.Join(errs...)
}
