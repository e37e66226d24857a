package room

// The room's refusals: every code it refuses with, each with its kind, and
// the Error that carries one (specs: room protocol "error", host tools'
// structured errors, the HTTP API's error table).

import (
	"fmt"

	"github.com/chopin-desktop/chopin/fault"
)

// Refusal codes. They are stable: clients and tests match on them. Every
// code has its kind in kinds; a test fails on a code declared without one.
const (
	CodeInvalidArgument  = "invalid-argument"
	CodeNotFound         = "not-found"
	CodeReadOnly         = "read-only"
	CodeDocumentArchived = "document-archived"
	CodeInternal         = "internal"

	// Frames of the room protocol.
	CodeMalformed   = "malformed-message"
	CodeUnknownType = "unknown-message-type"

	// The plan: a person's edit, edit_plan and the document model.
	CodeStaleRevision     = "stale-revision"
	CodeStaleVersion      = "stale-version"
	CodeInvalidChanges    = "invalid-changes"
	CodeInvalidOperation  = "invalid-operation"
	CodeReservedComponent = "reserved-component"
	CodeDocumentTooLarge  = "document-too-large"
	CodeEmptyDocument     = "empty-document"
	CodeInvalidPlanFile   = "invalid-plan-file" // an imported Markdown file: every problem, with its line
	CodeInvalidText       = "invalid-text"      // a control character in a plan or a note (textrule.Text)

	// Chat: a message, its files, a command for the Planner.
	CodeMessageTooLarge   = "message-too-large"
	CodeInvalidAttachment = "invalid-attachment"
	CodeUnknownCommand    = "unknown-command"

	// A message no Planner can take. The wording is the agent connection's:
	// it alone knows whether a Planner is attached, away or busy.
	CodePlannerNotAttached = "planner-not-attached"
	CodePlannerBusy        = "planner-busy"

	// Decisions: the Planner's question, a person's answer.
	CodeInvalidQuestion = "invalid-question"
	CodeInvalidAnswer   = "invalid-answer"
	CodeDecisionClosed  = "decision-closed"
	CodeDecisionOpen    = "decision-open"
	CodeDraftTooLarge   = "draft-too-large"

	// Comment threads on passages.
	CodeInvalidPassage  = "invalid-passage"
	CodePassageTooLarge = "passage-too-large"
	CodeCommentTooLarge = "comment-too-large"
	CodeTooManyThreads  = "too-many-threads"
	CodeThreadFull      = "thread-full"
	CodeThreadClosed    = "thread-closed"

	// upload_plan_image.
	CodeImageTooLarge      = "image-too-large"
	CodeUnsupportedImage   = "unsupported-image-type"
	CodeImageTypeMismatch  = "image-type-mismatch"
	CodeImageTooManyPixels = "image-too-many-pixels"
)

// kinds is what sort of refusal each code is; over HTTP the kind decides the
// status, so a code's kind must keep the status the HTTP API documents.
var kinds = map[string]fault.Kind{
	CodeInvalidArgument:  fault.Invalid,
	CodeNotFound:         fault.NotFound,
	CodeReadOnly:         fault.Forbidden,
	CodeDocumentArchived: fault.Conflict,
	CodeInternal:         fault.Internal,

	CodeMalformed:   fault.Invalid,
	CodeUnknownType: fault.Invalid,

	CodeStaleRevision:     fault.Conflict,
	CodeStaleVersion:      fault.Conflict,
	CodeInvalidChanges:    fault.Invalid,
	CodeInvalidOperation:  fault.Invalid,
	CodeReservedComponent: fault.Invalid,
	CodeDocumentTooLarge:  fault.TooLarge,
	CodeEmptyDocument:     fault.Invalid,
	CodeInvalidPlanFile:   fault.Invalid,
	CodeInvalidText:       fault.Invalid,

	CodeMessageTooLarge:   fault.TooLarge,
	CodeInvalidAttachment: fault.Invalid,
	CodeUnknownCommand:    fault.Invalid,

	CodePlannerNotAttached: fault.Conflict,
	CodePlannerBusy:        fault.Conflict,

	CodeInvalidQuestion: fault.Invalid,
	CodeInvalidAnswer:   fault.Invalid,
	CodeDecisionClosed:  fault.Conflict,
	CodeDecisionOpen:    fault.Conflict,
	CodeDraftTooLarge:   fault.TooLarge,

	CodeInvalidPassage:  fault.Invalid,
	CodePassageTooLarge: fault.TooLarge,
	CodeCommentTooLarge: fault.TooLarge,
	CodeTooManyThreads:  fault.Conflict,
	CodeThreadFull:      fault.Conflict,
	CodeThreadClosed:    fault.Conflict,

	CodeImageTooLarge:      fault.TooLarge,
	CodeUnsupportedImage:   fault.Invalid,
	CodeImageTypeMismatch:  fault.Invalid,
	CodeImageTooManyPixels: fault.TooLarge,
}

// An Error is a refusal the caller shows as it is: Code is a stable
// identifier, Message plain English saying what happened and what to do.
// Stale is set only for stale-revision.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Stale   *Stale `json:"stale,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Kind is what sort of refusal e is, which its code decides. The app also
// makes Errors from the agent connection's refusals (planner-busy, ...), so
// a code may come from outside this file; one it does not declare is
// Chopin's own mistake, hence Internal.
func (e *Error) Kind() fault.Kind {
	if k, ok := kinds[e.Code]; ok {
		return k
	}
	return fault.Internal
}

// Unwrap is the error's kind, so errors.Is(err, fault.Conflict) matches it.
func (e *Error) Unwrap() error { return e.Kind() }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
