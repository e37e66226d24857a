package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Host is everything the application provides: who a bearer is, what a
// document is, and the room's side of a Planner.
type Host interface {
	Directory
	Room
}

// Directory answers who and what: accounts and documents.
type Directory interface {
	// Authenticate returns the account an agent token belongs to:
	// ErrUnauthorized for a token it does not know (HTTP 401),
	// ErrUnavailable when it cannot tell right now (503), anything else 500.
	Authenticate(ctx context.Context, bearer string) (Account, error)
	// Document resolves a document by its id or Chopin URL, archived ones
	// included: ErrDocumentNotFound when none matches or it is being deleted.
	Document(ctx context.Context, ref string) (Document, error)
	// Access reports whether the account may hold doc's Planner (push or
	// administration access): nil, ErrForbidden, or another error when it
	// cannot decide, which leaves an attached link open.
	Access(ctx context.Context, account Account, doc Document) error
}

// Room is the document's side of a Planner: Chat, Decisions, run cards and
// the host tools. Its methods are called without any agentconn lock held, so
// they may call back into the Server.
type Room interface {
	// PlannerChanged tells the room the document's Planner status changed
	// (attached, grace, none) so it can show it to its members.
	PlannerChanged(documentID string, status PlannerStatus)
	// CallTool runs one host tool (read_plan, edit_plan, ask, ...) for a live
	// turn. ctx ends when the turn ends, is aborted or the link closes: the
	// tool stops and withdraws any Decision it opened. A failure the Planner
	// should read is a *ToolError (or wraps one); any other error is logged
	// and reported to the Planner as a generic failure.
	CallTool(ctx context.Context, call ToolCall) (json.RawMessage, error)
	// Ask turns an input-request into Decisions and returns once they exist;
	// the answer comes later through q.Answer. An error answers the request
	// failed; a *ToolError's message is shown to the Planner.
	Ask(ctx context.Context, q *Question) error
	// Withdraw withdraws the open Decisions of q: the client cancelled it,
	// its session ended or the link closed. q.Answer is refused afterwards.
	Withdraw(q *Question)
	// Runs reports a session's workflow runs, to show as run cards.
	Runs(documentID string, report RunsReport)
}

// TurnSink receives one turn's stream for the document's Chat. Calls for one
// turn are never concurrent, arrive in order, and End comes exactly once and
// last. They are made from the link's goroutines, so they must not block.
type TurnSink interface {
	// Part is one stream part as the client sent it, validated.
	Part(p wire.StreamPart)
	// ToolCall is a row of "Work details": a host tool the server ran or
	// one of the client's own tools, when it starts and when it finishes.
	ToolCall(e ToolCallEvent)
	// End ends the turn. When the turn ended normally it is called on a
	// goroutine of its own and may take its time: the Planner counts as
	// busy until it returns.
	End(o TurnOutcome)
}

// IdleSink is a TurnSink that hears when the turn's Planner stops counting
// as busy, once its End has returned: the moment to start the next turn.
type IdleSink interface {
	TurnSink
	Idle()
}

// Account is who a bearer authenticates as.
type Account struct {
	Login string
}

// Document is what agentconn knows of a document.
type Document struct {
	ID         string
	Title      string
	Repository string // owner/name
	URL        string // its Chopin URL
	Archived   bool
}

// Errors a Host returns.
var (
	ErrUnauthorized     = errors.New("agentconn: the bearer is not a known agent token")
	ErrUnavailable      = errors.New("agentconn: the account cannot be checked right now")
	ErrDocumentNotFound = errors.New("agentconn: no document matches")
	ErrForbidden        = errors.New("agentconn: the account cannot push to or administer the repository")
)

// Errors the Server returns.
var (
	ErrNotAttached    = errors.New("agentconn: no Planner is attached to the document")
	ErrQuestionClosed = errors.New("agentconn: the question was already answered or withdrawn")
	ErrServerClosed   = errors.New("agentconn: the server is shut down")
)

// TurnRefused is a person's request for a turn that the Planner cannot take,
// with the spec's code (planner-not-attached or planner-busy) and wording,
// ready to show in Chat or return as HTTP 409.
type TurnRefused struct {
	Code    string
	Message string
}

func (e *TurnRefused) Error() string { return e.Message }

// Codes of TurnRefused.
const (
	CodePlannerNotAttached = "planner-not-attached"
	CodePlannerBusy        = "planner-busy"
)

// TurnRequest is one turn for the attached Planner. The application composes
// the text (DESIGN.md section 8); agentconn carries it.
type TurnRequest struct {
	Mode           string            // ModePlanner (the default) or ModeIsolated
	Prompt         string            // "@<login>: <text>", preceded by what was said since the last turn
	Instructions   string            // the system prompt and the conversation so far
	Model          string            // MODEL, when set, or the model a person chose (capability-catalog)
	ThinkingLevel  string            // capability-catalog: the level a person chose
	Attachments    []wire.Attachment // attachments: the files of the message that began the turn
	ChatMessage    string            // retry-turn: the id of the Chat message the turn answers
	Retry          bool              // retry-turn: the turn runs ChatMessage again after a failed one
	Tools          []wire.Tool       // the host tools this turn offers
	ResponseFormat *wire.ResponseFormat
	Sink           TurnSink

	// Thread, with session-forks, names the thread the turn continues: its
	// session forks from the thread's last finished turn on the link, and
	// then gets ForkInstructions (when set) instead of Instructions, which
	// a fallback start still carries. Empty never forks (fork.go).
	Thread           string
	ForkInstructions string
}

// ToolCall is one host tool call for Room.CallTool.
type ToolCall struct {
	Document   string // document id
	Session    string
	Turn       string
	ToolCallID string
	Name       string
	Input      json.RawMessage // the arguments, valid JSON
}

// Tool call statuses of a ToolCallEvent.
const (
	ToolRunning = "running"
	ToolDone    = "done"
	ToolFailed  = "failed"
)

// ToolCallEvent is a tool row's state.
type ToolCallEvent struct {
	ToolCallID string
	Name       string
	Host       bool   // a host tool the server ran, not one of the client's own
	Status     string // running, done or failed
	Input      json.RawMessage
	Result     json.RawMessage // done and failed: the result as sent
	Error      *wire.ToolError // failed: the structured error, when there is one
	Duration   time.Duration   // done and failed
}

// TurnOutcome is how a turn ended.
type TurnOutcome struct {
	Status  string // finished, failed or aborted
	Message string // failed: the error to show
}

// Question is an open input-request, in the room's hands until it answers
// it or agentconn withdraws it.
type Question struct {
	Document        string
	Session         string
	Request         string
	WorkflowRunID   string
	WorkflowStageID string
	RootRunID       string
	Block           *wire.Block
	Input           wire.Input

	link atomic.Pointer[link] // the link that holds it; a resume moves it (resume.go)
	// guarded by link.mu
	settled   bool
	held      *wire.InputResult // an answer held while its root run is paused
	decisions string            // the host's name for its Decisions (SetDecisions), kept across a restart
}

// Answer answers the question. It fails with ErrQuestionClosed once the
// question was answered or withdrawn, and with a descriptive error when a
// does not fit the question's method.
func (q *Question) Answer(a wire.Answer) error {
	for {
		if err := q.link.Load().answer(q, a); err != errMoved {
			return err
		}
	}
}

// root is the run whose pause holds this question's answer.
func (q *Question) root() string {
	if q.RootRunID != "" {
		return q.RootRunID
	}
	return q.WorkflowRunID
}

// RunsReport is a session's runs report for Room.Runs. Cards are as the
// client sent them (a delta card keeps StagesDelta; merge with RunCard.Apply).
// When the link closes, a last report with Closed set shows every live run
// as stopped.
type RunsReport struct {
	Document string
	Session  string
	Active   []string
	Paused   []string
	Cards    []wire.RunCard
	Closed   bool
}

// PlannerState is whether a document has a Planner.
type PlannerState string

// Planner states.
const (
	PlannerNone     PlannerState = "none"
	PlannerAttached PlannerState = "attached"
	PlannerGrace    PlannerState = "grace" // detached; the owner keeps it until Until
	// PlannerDisconnected: a resumable link dropped and its work is kept
	// until its client resumes (resumable-sessions).
	PlannerDisconnected PlannerState = "disconnected"
)

// PlannerStatus is a document's Planner as the UI and HTTP show it.
type PlannerStatus struct {
	State    PlannerState
	Login    string         // attached and grace: the owner
	Features []string       // attached: the features granted; nil when the client asked for none
	Since    time.Time      // attached: when it attached
	Until    time.Time      // grace: when the ownership is released
	Runs     []wire.RunCard // attached: the run cards of its sessions, stages merged
}
