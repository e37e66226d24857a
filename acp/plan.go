package acp

// An ACP plan as a run card: the turn's plan is one run ("The agent's
// plan"), each plan entry a stage, reported in full whenever the agent
// sends its plan again (ACP plans always carry every entry), and ended with
// the turn.

import (
	"strconv"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// maxPlanEntries bounds the stages of one plan the bridge reports.
const maxPlanEntries = 256

// planRun is the run card of a turn's plan; nil until the agent sends one.
type planRun struct {
	card wire.RunCard
}

var planStatuses = map[sdk.PlanEntryStatus]string{
	sdk.PlanEntryStatusPending:    "pending",
	sdk.PlanEntryStatusInProgress: "running",
	sdk.PlanEntryStatusCompleted:  "completed",
}

// plan reports the agent's plan as the turn's run card. Call with s.mu held.
func (s *turnState) plan(entries []sdk.PlanEntry) {
	now := time.Now().UnixMilli()
	if s.run == nil {
		s.run = &planRun{card: wire.RunCard{ID: "plan-" + s.t.ID(), Name: "The agent's plan", Status: "running", Started: now}}
	}
	c := &s.run.card
	c.Updated = now
	c.Stages = c.Stages[:0]
	for i, e := range entries {
		if i == maxPlanEntries {
			break
		}
		status := planStatuses[e.Status]
		if status == "" {
			status = "pending"
		}
		c.Stages = append(c.Stages, wire.Stage{ID: "entry-" + strconv.Itoa(i+1), Name: cutText(e.Content, wire.MaxNoteChars), Status: status})
	}
	s.reportRun([]string{c.ID})
}

// endRun ends the plan's run card with the turn: finished, stopped or
// failed. Call with s.mu held.
func (s *turnState) endRun(status string) {
	if s.run == nil {
		return
	}
	now := time.Now().UnixMilli()
	c := &s.run.card
	c.Status, c.Updated, c.Ended = status, now, &now
	for i := range c.Stages {
		if st := &c.Stages[i]; st.Status == "running" || st.Status == "pending" {
			if status == "finished" {
				continue // the agent's last word on its plan stands
			}
			st.Status = "stopped"
		}
	}
	s.reportRun(nil)
}

func (s *turnState) reportRun(active []string) {
	if err := s.t.Session.ReportRuns(active, nil, []wire.RunCard{s.run.card}); err != nil {
		s.d.logger().Warn("report the agent's plan", "err", err)
	}
}
