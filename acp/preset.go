package acp

// The agents `chopin planner --acp NAME` knows by name, found on this
// computer when the planner starts: Claude Code and Codex through Zed's
// ACP adapters (the adapter's own command when it is installed, else npx,
// which fetches it once), Gemini CLI with the flag its version takes and
// its workspace trusted for the run, so that it starts the MCP server the
// bridge offers. A preset whose agent is missing says how to install it.

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// PresetNames are the presets in the order a person reads them.
var PresetNames = []string{"claude", "codex", "gemini"}

// A Preset is how a preset agent runs on this computer.
type Preset struct {
	Command []string // its command line
	// Env are variables added to the planner's environment for it.
	Env []string
}

// adapters are the presets that run an ACP adapter from npm.
var adapters = map[string]struct{ bin, pkg, product string }{
	"claude": {"claude-agent-acp", "@zed-industries/claude-agent-acp", "Claude Code"},
	"codex":  {"codex-acp", "@zed-industries/codex-acp", "Codex"},
}

// helpTimeout bounds `gemini --help`, which tells which flag it takes.
const helpTimeout = 30 * time.Second

// acpFlagRE finds the --acp option in Gemini CLI's help.
var acpFlagRE = regexp.MustCompile(`(?m)^\s*--acp(?:[\s,=]|$)`)

// FindPreset finds the preset agent name on this computer (PATH), or says
// how to install it. ok is false when name is no preset.
func FindPreset(ctx context.Context, name string) (p Preset, ok bool, err error) {
	if a, isAdapter := adapters[name]; isAdapter {
		if path, err := exec.LookPath(a.bin); err == nil {
			return Preset{Command: []string{path}}, true, nil
		}
		if _, err := exec.LookPath("npx"); err == nil {
			return Preset{Command: []string{"npx", "-y", a.pkg}}, true, nil
		}
		return Preset{}, true, fmt.Errorf("%s runs through its ACP adapter %s, which needs Node.js: install Node.js (https://nodejs.org), whose npx fetches the adapter the first time, or install the adapter with: npm install -g %s", a.product, a.pkg, a.pkg)
	}
	if name != "gemini" {
		return Preset{}, false, nil
	}
	path, err := exec.LookPath("gemini")
	if err != nil {
		return Preset{}, true, fmt.Errorf("Gemini CLI (gemini) was not found on this computer. Install it with: npm install -g @google/gemini-cli, and run gemini once to sign in")
	}
	// Gemini CLI starts no MCP server, Chopin's included, in a folder it
	// does not trust; the planner's run trusts the session's folder.
	return Preset{Command: []string{path, geminiACPFlag(ctx, path)}, Env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}}, true, nil
}

// geminiACPFlag is the flag that starts Gemini CLI in ACP mode: --acp from
// the version that lists it in its help, --experimental-acp before (and
// when the help cannot be read: later versions still take it).
func geminiACPFlag(ctx context.Context, gemini string) string {
	ctx, cancel := context.WithTimeout(ctx, helpTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gemini, "--help")
	cmd.WaitDelay = time.Second
	out, _ := cmd.Output()
	if acpFlagRE.Match(out) {
		return "--acp"
	}
	return "--experimental-acp"
}

// Describe is the preset's command line as the planner says it.
func (p Preset) Describe() string {
	words := append([]string{}, p.Env...)
	return strings.Join(append(words, p.Command...), " ")
}
