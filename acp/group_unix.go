//go:build unix

package acp

// The agent's process group on Unix. The agent starts as the leader of a
// group of its own, which everything it starts joins (npx and the adapter,
// the MCP servers it runs, its commands), so that stopping it reaches them
// all, and a signal to the planner's group (Ctrl+C in a terminal) reaches
// the planner alone, which then stops the agent in order.

import (
	"log/slog"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd start in a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// group is a started agent's process group.
type group struct{ pgid int }

func groupOf(cmd *exec.Cmd, _ *slog.Logger) *group { return &group{pgid: cmd.Process.Pid} }

// terminate asks every process of the group to end (SIGTERM).
func (g *group) terminate() { _ = syscall.Kill(-g.pgid, syscall.SIGTERM) }

// kill ends every process of the group (SIGKILL).
func (g *group) kill() { _ = syscall.Kill(-g.pgid, syscall.SIGKILL) }

// alive says whether a process of the group is left. The group's id is
// its leader's process id; the bridge stops a group within seconds of its
// leader's end, long before a new process could be given that id.
func (g *group) alive() bool {
	err := syscall.Kill(-g.pgid, 0)
	return err == nil || err == syscall.EPERM
}

func (g *group) release() {}
