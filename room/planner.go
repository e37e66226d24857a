package room

import (
	"context"
	"errors"
)

// Planner is the document's Planner as the room sees it: the agent
// connection implements it. A room never queues a message for a Planner.
type Planner interface {
	// Available refuses an @chopin message when no Planner can take it now
	// (none attached, or it is busy with a turn), with an *Error whose
	// message says why in the specification's words. It is called with the
	// room's lock held, so it must not call back into the room.
	Available(ctx context.Context, ch Channel) error
	// Turn hands a person's @chopin message, already posted, to the Planner.
	Turn(ctx context.Context, ch Channel, m Message) error
}

// noPlanner is the Planner of a hub built without one (tests of the room
// alone); the app always plugs in the agent connection.
type noPlanner struct{}

func (noPlanner) Available(context.Context, Channel) error { return errNoPlanner }

func (noPlanner) Turn(context.Context, Channel, Message) error { return errNoPlanner }

var errNoPlanner = &Error{Code: CodePlannerNotAttached, Message: "This server offers no agent connection, so no Planner can reply."}

func asError(err error, target **Error) bool { return errors.As(err, target) }

// ShowPlanner tells the room's members that the document's Planner changed
// (attached, away, gone): planner:status, with status as the app shapes it.
func (r *Room) ShowPlanner(status any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.broadcastLocked(msgPlannerStatus{Type: "planner:status", Planner: status})
}

// ShowRuns sends the members the document's run cards: planner:runs.
func (r *Room) ShowRuns(runs any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.broadcastLocked(msgPlannerRuns{Type: "planner:runs", Runs: runs})
}

// ShowJobs sends the members the document's background jobs: jobs:state,
// with jobs as the app shapes them (never prompts or model text).
func (r *Room) ShowJobs(jobs any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.broadcastLocked(msgJobs{Type: "jobs:state", Jobs: jobs})
}

// ShowJobs sends this member the document's background jobs, as when it joins.
func (m *Member) ShowJobs(jobs any) {
	m.conn.Send(encode(msgJobs{Type: "jobs:state", Jobs: jobs}))
}

type (
	msgJobs struct {
		Type string `json:"type"` // jobs:state
		Jobs any    `json:"jobs"`
	}
	msgPlannerStatus struct {
		Type    string `json:"type"` // planner:status
		Planner any    `json:"planner"`
	}
	msgPlannerRuns struct {
		Type string `json:"type"` // planner:runs
		Runs any    `json:"runs"`
	}
)
