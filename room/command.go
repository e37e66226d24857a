package room

import (
	"context"
	"strings"
)

// A command the attached Planner's client offers (capability-catalog: a
// skill, a prompt, a workflow), run from the composer. It is a message to the
// Planner like any other, written "@chopin /<name> <args>" so Chat shows what
// was asked; the app turns it into the turn's prompt.

// ChatCommand names a command as the composer offered it.
type ChatCommand struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// CommandChecker is a Planner that knows the commands its client offers.
type CommandChecker interface {
	// CheckCommand refuses a command the attached client did not report,
	// by name and kind, with an *Error.
	CheckCommand(ctx context.Context, ch Channel, cmd ChatCommand) error
}

// SayCommand posts a person's command for the Planner: checked against what
// the attached client reported, then sent as Say sends "@chopin /name args".
func (r *Room) SayCommand(ctx context.Context, who Identity, cmd ChatCommand, args string) (Message, error) {
	cc, ok := r.hub.planner.(CommandChecker)
	if !ok {
		return Message{}, errorf(CodeUnknownCommand, "The Planner offers no commands.")
	}
	r.mu.Lock()
	ch := r.channel
	r.mu.Unlock()
	if err := cc.CheckCommand(ctx, ch, cmd); err != nil {
		return Message{}, err
	}
	text := "@chopin /" + cmd.Name
	if args = strings.TrimSpace(args); args != "" {
		text += " " + args
	}
	return r.Say(ctx, who, text)
}
