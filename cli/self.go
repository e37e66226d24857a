package cli

import (
	"strings"

	"github.com/chopin-desktop/chopin/instance"
)

// runCommand is a chopin command as a person types it to run this very
// program: args after "chopin" when the PATH's chopin is this binary, else
// after its full path (instance.Command), so that no message sends a
// person to a chopin that is not there, or is another. Every message that
// tells a person to run chopin names it through here.
func runCommand(args string) string {
	cmd := instance.Command()
	if args = strings.TrimSpace(args); args != "" {
		cmd += " " + args
	}
	return cmd
}
