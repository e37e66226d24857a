package room

import (
	"context"
	"errors"
)

// Planner is the document's Planner as the room sees it: the agent
// connection implements it. A room never queues a message for a Planner.
type Planner interface {
	// Available refuses an @chopin message when no Planner can take it now,
	// with an *Error whose message says why in the specification's words.
	Available(ch Channel) error
	// Turn hands a person's @chopin message to the Planner.
	Turn(ctx context.Context, ch Channel, m Message) error
}

// CodePlannerNotAttached is the refusal of a message no Planner can take.
const CodePlannerNotAttached = "planner-not-attached"

// noPlanner is the Planner of a server without an agent connection.
type noPlanner struct{}

func (noPlanner) Available(ch Channel) error { return NotAttached(ch) }

func (noPlanner) Turn(_ context.Context, ch Channel, _ Message) error { return NotAttached(ch) }

// NotAttached is the refusal for a document with no attached Planner, in the
// words of the specification's "Without an attached Planner".
func NotAttached(ch Channel) *Error {
	return &Error{Code: CodePlannerNotAttached,
		Message: "Connect a machine to get a reply. Connect an agent client to " + ch.URL +
			" over the agent connection from a session in a checkout of " + ch.Repository + "."}
}

func asError(err error, target **Error) bool { return errors.As(err, target) }
