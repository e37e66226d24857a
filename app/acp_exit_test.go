//go:build linux

package app

// chopin planner --acp ends cleanly: the agent runs in its own process
// group, and SIGTERM (idle or mid-turn), SIGINT or SIGHUP (a closed
// terminal) to the chopin binary, or Chopin letting the Planner go, stop
// the whole group (TERM, then KILL) and chopin exits, with no process of
// the group left behind,
// even a child of the agent that ignores SIGTERM and holds its stderr
// open. The binary is built from this tree; processes are read from /proc.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/instance"
)

// procGroup is a process's group, from /proc; ok is false once it is gone
// or a zombie (ended, not yet reaped).
func procGroup(pid int) (pgid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	pgid, _ = strconv.Atoi(f[2])
	return pgid, true
}

// groupMembers are the live processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, ok := procGroup(pid); ok && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

var sessionsPIDRE = regexp.MustCompile(`pid (\d+), child (\d+)`)

func TestACPPlannerExitStopsTheAgentGroup(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "chopin")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("build chopin: %v\n%s", err, out)
	}
	ta := startAppWith(t, testConfig(t, root))
	ta.AddRepository("octo/plans")

	signal := func(sig syscall.Signal) func(*testing.T, *exec.Cmd) {
		return func(t *testing.T, p *exec.Cmd) { p.Process.Signal(sig) }
	}
	for _, tc := range []struct {
		name    string
		midTurn bool // the agent is in a prompt when the planner is told to stop
		end     func(t *testing.T, planner *exec.Cmd)
	}{
		{"SIGTERM", false, signal(syscall.SIGTERM)},
		{"SIGTERM mid-turn", true, signal(syscall.SIGTERM)},
		{"SIGINT", false, signal(syscall.SIGINT)},
		{"SIGHUP", false, signal(syscall.SIGHUP)},
		// Chopin lets the Planner go: a new agent token closes its link, and
		// the old token attaches no more.
		{"detach", false, func(t *testing.T, _ *exec.Cmd) {
			if _, err := instance.RotateAgentToken(ta.app.cfg.ConfigDir); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := ta.CreateDocument("octo/plans", "Exit on "+tc.name)
			browser := ta.DialRoom(ch.ID)
			planner := exec.Command(bin, "planner", "--acp", "exec", ch.ID, "--", os.Args[0], "-test.run=^TestFakeACPAgent$")
			planner.Env = append(apptest.ProcessEnv(root), fakeACPAgentEnv+"=script-child")
			// Its own group, so that the test's SIGTERM reaches chopin
			// alone, as a service manager's or kill's would.
			planner.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr strings.Builder
			planner.Stderr = &stderr
			stdout, _ := planner.StdoutPipe()
			if err := planner.Start(); err != nil {
				t.Fatal(err)
			}
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					t.Log("chopin planner: " + sc.Text())
				}
			}()
			exited := make(chan error, 1)
			go func() { exited <- planner.Wait() }()
			var agent, child int
			t.Cleanup(func() {
				// Whatever a failed run left behind.
				syscall.Kill(-planner.Process.Pid, syscall.SIGKILL)
				for _, pid := range []int{agent, child} {
					if pid > 0 {
						syscall.Kill(-pid, syscall.SIGKILL)
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})

			text := ta.sessionsAfterAttach(browser, ch.ID, "m1")
			m := sessionsPIDRE.FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("the agent said %q", text)
			}
			agent, _ = strconv.Atoi(m[1])
			child, _ = strconv.Atoi(m[2])
			group, ok := procGroup(agent)
			if !ok {
				t.Fatalf("the agent %d is not running", agent)
			}
			if group == planner.Process.Pid {
				t.Errorf("the agent runs in chopin planner's process group %d, not its own", group)
			}
			if g, _ := procGroup(child); g != group {
				t.Errorf("the agent's child is in group %d, the agent in %d", g, group)
			}

			if tc.midTurn {
				browser.Send(map[string]any{"type": "chat:send", "id": "m2", "text": "@chopin wait"})
				browser.Until("chat:delta") // "Waiting": the agent is in its prompt
			}
			start := time.Now()
			tc.end(t, planner)
			select {
			case err := <-exited:
				t.Logf("chopin planner exited after %s: %v", time.Since(start).Round(time.Millisecond), err)
			case <-time.After(15 * time.Second):
				t.Fatalf("chopin planner did not exit within 15 s of %s; stderr:\n%s", tc.name, stderr.String())
			}
			// Processes ended by the group's KILL are reaped by init; give it
			// a moment.
			deadline := time.Now().Add(apptest.Wait)
			for len(groupMembers(group)) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if left := groupMembers(group); len(left) > 0 {
				t.Errorf("processes of the agent's group %d left behind: %v", group, left)
			}
			if _, alive := procGroup(child); alive {
				t.Errorf("the agent's child %d is still running", child)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr.String())
			}
		})
	}
}
