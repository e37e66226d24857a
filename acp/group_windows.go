//go:build windows

package acp

// The agent's process tree on Windows: a job object that the agent is put
// in as soon as it starts, which the processes it starts then join, and
// which ends them all when the bridge stops the agent, or when the planner
// itself ends (the job is closed with its last handle). A process the
// agent starts in the moment before it joins the job is not in it.

import (
	"log/slog"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

func ownGroup(*exec.Cmd) {}

// group is a started agent's job object; job is 0 when none could be made.
type group struct{ job windows.Handle }

func groupOf(cmd *exec.Cmd, log *slog.Logger) *group {
	g := &group{}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		log.Warn("the agent's job object", "err", err)
		return g
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
		LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE}}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		log.Warn("the agent's job object", "err", err)
		windows.CloseHandle(job)
		return g
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, p)
		windows.CloseHandle(p)
	}
	if err != nil {
		log.Warn("the agent's job object", "err", err)
		windows.CloseHandle(job)
		return g
	}
	g.job = job
	return g
}

// terminate ends the job's processes: Windows has no request to end that
// every program honours, and the agent had its stdin closed already.
func (g *group) terminate() { g.kill() }

func (g *group) kill() {
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
	}
}

// alive is false: terminate ended the job at once.
func (g *group) alive() bool { return false }

func (g *group) release() {
	if g.job != 0 {
		windows.CloseHandle(g.job)
		g.job = 0
	}
}
