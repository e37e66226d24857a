package plannerhost

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// Commands the attached client reported (capability-catalog): a person runs
// one from the composer, checked by name and kind against the last report,
// and Chat keeps it as "@chopin /name args". The turn's prompt is then what
// the spec says: "/name args" for a skill, a prompt or any kind other than
// workflow, and a request to start the workflow of that name, with the words
// after it as its input, for a workflow.

var _ room.CommandChecker = (*Host)(nil)

// CheckCommand refuses a command the attached client did not report.
func (h *Host) CheckCommand(_ context.Context, ch room.Channel, cmd room.ChatCommand) error {
	cat := h.agent.Catalog(ch.ID)
	for _, c := range catalogCommands(cat) {
		if c.Name == cmd.Name && c.Kind == cmd.Kind {
			return nil
		}
	}
	return &room.Error{Code: room.CodeUnknownCommand,
		Message: fmt.Sprintf("The attached Planner's client does not offer the %s command /%s.", orWord(cmd.Kind, "unnamed kind of"), cmd.Name)}
}

func orWord(s, instead string) string {
	if s == "" {
		return instead
	}
	return s
}

func catalogCommands(cat *wire.Catalog) []wire.CatalogCommand {
	if cat == nil {
		return nil
	}
	return cat.Commands
}

var commandMessage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)^@chopin /(.*)$`) })

// commandOf reads a message written as "@chopin /name args" for a command
// the attached client reports; the longest reported name that fits wins, so
// a name may hold spaces.
func (h *Host) commandOf(documentID, text string) (cmd wire.CatalogCommand, args string, ok bool) {
	sub := commandMessage().FindStringSubmatch(text)
	if sub == nil {
		return cmd, "", false
	}
	rest := sub[1]
	for _, c := range catalogCommands(h.agent.Catalog(documentID)) {
		if c.Name == "" || !strings.HasPrefix(rest, c.Name) || len(c.Name) <= len(cmd.Name) && ok {
			continue
		}
		after := rest[len(c.Name):]
		if after != "" && after[0] != ' ' {
			continue
		}
		cmd, args, ok = c, strings.TrimSpace(after), true
	}
	return cmd, args, ok
}

// commandPrompt is the prompt of a command's turn.
func commandPrompt(cmd wire.CatalogCommand, args string) string {
	if cmd.Kind == "workflow" {
		p := fmt.Sprintf("Start the workflow %q.", cmd.Name)
		if args != "" {
			p = fmt.Sprintf("Start the workflow %q with this input: %s", cmd.Name, args)
		}
		return p
	}
	p := "/" + cmd.Name
	if args != "" {
		p += " " + args
	}
	return p
}
