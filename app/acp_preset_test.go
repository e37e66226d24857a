//go:build unix

package app

// The presets of chopin planner --acp as a person runs them, with fake
// agents on PATH that start the fake ACP agent of acp_test.go: Gemini CLI
// gets the flag its help lists (--acp, else --experimental-acp) and its
// workspace trusted; Claude Code's adapter runs installed, else through
// npx; every agent runs in the repository's checkout, or the document's
// folder when there is none; and a preset whose agent is missing says how
// to install it.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// fakeCommand writes an executable script name into dir.
func fakeCommand(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// startsFakeAgent is a script's last line: the fake ACP agent, given the
// script's arguments after the test binary's flags.
const startsFakeAgent = `exec "$CHOPIN_TEST_AGENT_BIN" -test.run='^TestFakeACPAgent$' -- "$@"` + "\n"

func TestACPPlannerPresets(t *testing.T) {
	ta := startApp(t)
	checkout := gitCheckout(t, "")
	if r := ta.Do("POST", "/api/repositories", map[string]any{"name": "octo/plans", "path": checkout}); r.Status != http.StatusCreated {
		t.Fatalf("add repository: %d %s", r.Status, r.Body)
	}
	ta.AddRepository("octo/notes") // no checkout
	ch := ta.CreateDocument("octo/plans", "Launch")
	loose := ta.CreateDocument("octo/notes", "Loose")
	browser := ta.DialRoom(ch.ID)

	bin := t.TempDir()
	t.Setenv("PATH", bin) // only the fakes
	t.Setenv(fakeACPAgentEnv, "script")
	t.Setenv("CHOPIN_TEST_AGENT_BIN", os.Args[0])

	// Missing agents: said at once, with how to install them.
	for _, tc := range []struct{ preset, want string }{
		{"gemini", "chopin planner: Gemini CLI (gemini) was not found on this computer. Install it with: npm install -g @google/gemini-cli, and run gemini once to sign in.\n"},
		{"claude", "chopin planner: Claude Code runs through its ACP adapter @zed-industries/claude-agent-acp, which needs Node.js: install Node.js (https://nodejs.org), whose npx fetches the adapter the first time, or install the adapter with: npm install -g @zed-industries/claude-agent-acp.\n"},
		{"codex", "chopin planner: Codex runs through its ACP adapter @zed-industries/codex-acp, which needs Node.js: install Node.js (https://nodejs.org), whose npx fetches the adapter the first time, or install the adapter with: npm install -g @zed-industries/codex-acp.\n"},
	} {
		cli := runPlanner(t, ta.plannerEnv(nil), "--acp", tc.preset, ch.ID)
		if code := cli.wait(t); code != 1 || cli.stderr.String() != tc.want {
			t.Errorf("--acp %s without it: exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", tc.preset, code, cli.stderr, tc.want)
		}
	}

	for _, tc := range []struct {
		name, preset string
		fakes        map[string]string
		want         string
	}{
		{"gemini with --acp", "gemini", map[string]string{
			"gemini": "if [ \"$1\" = --help ]; then printf 'Options:\\n  --acp  Starts the agent in ACP mode\\n  --experimental-acp  (deprecated)\\n'; exit 0; fi\n" + startsFakeAgent},
			fmt.Sprintf(`args ["--acp"], dir %s, session dir %s, trust "true"`, checkout, checkout)},
		{"gemini before --acp", "gemini", map[string]string{
			"gemini": "if [ \"$1\" = --help ]; then printf 'Options:\\n  --experimental-acp  Starts the agent in ACP mode\\n'; exit 0; fi\n" + startsFakeAgent},
			fmt.Sprintf(`args ["--experimental-acp"], dir %s, session dir %s, trust "true"`, checkout, checkout)},
		{"claude through npx", "claude", map[string]string{"npx": startsFakeAgent},
			fmt.Sprintf(`args ["-y" "@zed-industries/claude-agent-acp"], dir %s, session dir %s, trust ""`, checkout, checkout)},
		{"claude installed", "claude", map[string]string{"npx": "exit 9\n", "claude-agent-acp": startsFakeAgent},
			fmt.Sprintf(`args [], dir %s, session dir %s, trust ""`, checkout, checkout)},
		{"codex through npx", "codex", map[string]string{"npx": startsFakeAgent},
			fmt.Sprintf(`args ["-y" "@zed-industries/codex-acp"], dir %s, session dir %s, trust ""`, checkout, checkout)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{"gemini", "npx", "claude-agent-acp", "codex-acp"} {
				os.Remove(filepath.Join(bin, name))
			}
			for name, script := range tc.fakes {
				fakeCommand(t, bin, name, script)
			}
			cli := runPlanner(t, ta.plannerEnv(nil), "--acp", tc.preset, ch.ID)
			ta.waitAttached(browser, ch.ID)
			if r := reply(browser, "m-"+tc.name, "@chopin how do you run"); r["text"] != tc.want {
				t.Errorf("the agent runs as %v\nwant %s", r["text"], tc.want)
			}
			if code := cli.stop(t); code != 0 {
				t.Errorf("exit %d; stderr:\n%s", code, cli.stderr)
			}
		})
	}

	// A document whose repository has no checkout: the agent runs in the
	// document's own folder under the data directory.
	t.Run("no checkout", func(t *testing.T) {
		fakeCommand(t, bin, "npx", startsFakeAgent)
		room := ta.DialRoom(loose.ID)
		cli := runPlanner(t, ta.plannerEnv(nil), "--acp", "claude", loose.ID)
		ta.waitAttached(room, loose.ID)
		folder := filepath.Join(ta.app.cfg.DataDir, "acp", "documents", loose.ID)
		want := fmt.Sprintf(`args ["-y" "@zed-industries/claude-agent-acp"], dir %s, session dir %s, trust ""`, folder, folder)
		if r := reply(room, "m1", "@chopin how do you run"); r["text"] != want {
			t.Errorf("the agent runs as %v\nwant %s", r["text"], want)
		}
		cli.stop(t)
	})
}
