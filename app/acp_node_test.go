package app

// chopin planner --acp with an agent written with the official TypeScript
// ACP library (ui/tests/acp-agent.mjs, run by Node), end to end through the
// real app: a person's @chopin message is its prompt, it edits the plan
// through the MCP server it was given, its plan is a run card, its
// permission request is a Decision whose answer reaches it, Stop cancels it,
// and it writes the document's description in an isolated session.

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// nodeACPAgent is the command line of the Node test agent, or a skip (a
// failure under CI, which installs Node and ui/node_modules).
func nodeACPAgent(t testing.TB) []string {
	t.Helper()
	ui, node := apptest.NodeTool(t, "node", "@agentclientprotocol/sdk")
	return []string{node, filepath.Join(ui, "tests", "acp-agent.mjs")}
}

func TestACPPlannerNodeAgent(t *testing.T) {
	agent := nodeACPAgent(t)
	ta, ch, browser := startWithLaunch(t)
	cli := runPlanner(t, ta.plannerEnv(nil), append([]string{"--acp", "exec", ta.app.URL() + ch.URL, "--"}, agent...)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chopin planner --acp stdout:\n%s\nstderr:\n%s", cli.stdout, cli.stderr)
		}
	})
	ta.waitAttached(browser, ch.ID)

	if r := reply(browser, "m1", "@chopin add a risks section"); r["status"] != "done" || r["text"] != "I added a Risks section." {
		t.Fatalf("reply %v", r)
	}
	var plan room.Plan
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if plan.Source != "# Launch\n\n## Risks\n\nNone yet.\n" {
		t.Errorf("plan %q", plan.Source)
	}
	var planner struct {
		Runs []struct {
			Status string
			Stages []struct{ Name, Status string }
		}
	}
	ta.Do("GET", "/api/channels/"+ch.ID+"/planner", nil).JSON(t, &planner)
	if len(planner.Runs) != 1 || len(planner.Runs[0].Stages) != 2 || planner.Runs[0].Stages[1].Status != "completed" {
		t.Errorf("runs %+v", planner.Runs)
	}

	browser.Send(map[string]any{"type": "chat:send", "id": "m2", "text": "@chopin may I"})
	card := browser.Until("decision:update")["decision"].(map[string]any)
	if r := ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+card["id"].(string)+"/answer",
		map[string]any{"labels": []string{"Reject"}}); r.Status != http.StatusOK {
		t.Fatalf("answer: %d %s", r.Status, r.Body)
	}
	var r map[string]any
	for r == nil || r["status"] == "streaming" {
		if m := browser.Until("chat:message")["message"].(map[string]any); m["role"] == "planner" {
			r = m
		}
	}
	if r["text"] != "Permission: no" {
		t.Errorf("after the answer %v", r)
	}

	browser.Send(map[string]any{"type": "chat:send", "id": "m3", "text": "@chopin wait"})
	browser.Until("chat:delta")
	ta.Do("POST", "/api/channels/"+ch.ID+"/planner/stop", nil)
	for {
		m := browser.Until("chat:message")["message"].(map[string]any)
		if m["role"] == "planner" && m["status"] != "streaming" {
			if m["status"] != "stopped" || !strings.HasPrefix(fmt.Sprint(m["text"]), "Waiting") {
				t.Errorf("after Stop %v", m)
			}
			break
		}
	}
	// The description the document got at attach came from an isolated
	// session of the agent's (the agent answers it only there).
	eventually(t, "the description", func() bool { return descriptionOf(ta.channelNow(t, ch.ID)) == "Plan for Launch" })
	if code := cli.stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}
