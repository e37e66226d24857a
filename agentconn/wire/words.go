package wire

import (
	"fmt"
	"time"
)

// Every sentence a person or a client reads, in one place. The ones the spec
// gives are its exact words (tests assert them byte for byte); the others say
// what happened and what to do.

// Refusal and error codes.
const (
	CodeUnsupportedVersion  = "unsupported-version"
	CodeRepositoryForbidden = "repository-forbidden"
	CodePlannerAttached     = "planner-attached"
	CodeDocumentUnavailable = "document-unavailable"
	CodeDocumentArchived    = "document-archived"
	CodeAccessRevoked       = "access-revoked"
	CodeUnavailable         = "unavailable"
	CodeMalformed           = "malformed-message"
	CodeProtocol            = "protocol"
	CodeTooLarge            = "message-too-large"
)

// Close codes ("Closing").
const (
	CloseDetached     = 1000
	CloseUnresponsive = 1001
	ClosePolicy       = 1008
	CloseTooLarge     = 1009
	CloseUnavailable  = 1011
	CloseRestarting   = 1012
	CloseSignIn       = 4401
	CloseForbidden    = 4403
	CloseUnknownDoc   = 4404
	CloseAttached     = 4409
	CloseVersion      = 4426
)

// RefusalCloseCode is the close code that follows a refused with code.
func RefusalCloseCode(code string) int { return refusalClose[code] }

var refusalClose = map[string]int{
	CodeUnsupportedVersion:  CloseVersion,
	CodeRepositoryForbidden: CloseForbidden,
	CodeAccessRevoked:       CloseForbidden,
	CodePlannerAttached:     CloseAttached,
	CodeDocumentUnavailable: CloseUnknownDoc,
	CodeDocumentArchived:    CloseUnknownDoc,
	CodeUnavailable:         CloseUnavailable,
}

// specTime is how the spec writes an instant: 2026-10-10T19:42:00.000Z.
func specTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

const oneAgent = " A document has one agent connected at a time."

func MsgPlannerConnected(login string) string {
	return login + " is connected to this document." + oneAgent
}

func MsgPlannerKeeps(login string, until time.Time) string {
	return fmt.Sprintf("%s disconnected from this document and keeps it until %s unless they connect again.%s",
		login, specTime(until), oneAgent)
}

func MsgReset(login string) string {
	return "A repository writer reset this document's connection, so " + login + " is no longer connected. Connect again to resume."
}

func MsgReleased(login string) string {
	return "This document's connection was released, so " + login + " is no longer connected. Connect again to resume."
}

func MsgArchived(login string) string {
	return "This document was archived, so " + login + " is no longer connected. Restore it in Chopin, then connect again."
}

func MsgDeleted(login string) string {
	return "This document was deleted, so " + login + " is no longer connected."
}

func MsgAccessLost(login, repo string) string {
	return login + " can no longer push to or administer " + repo + ", so the connection was closed."
}

func MsgUnsupportedVersion(v int) string {
	return fmt.Sprintf("This server speaks version %d of the agent connection (%s), not version %d. Attach with version %d.",
		ProtocolVersion, Subprotocol, v, ProtocolVersion)
}

const (
	MsgDocumentUnavailable = "No document matches this id or URL, or it is being deleted. Check the document's URL in Chopin."
	MsgDocumentArchived    = "This document is archived. Restore it in Chopin, then connect again."
	MsgUnavailable         = "Chopin could not check the document or the account just now. Try again."
)

func MsgRepositoryForbidden(login, repo string) string {
	return login + " cannot push to or administer " + repo + ", so it cannot be this document's Planner."
}

// A resumable link whose connection dropped ("Resuming after a dropped link").

func MsgPlannerDropped(login string) string {
	return login + " is connected to this document, and its connection dropped. Its work is kept until it reconnects." + oneAgent
}

func MsgStillConnecting(login string) string {
	return "Still connecting to @" + login + "'s machine, so this message wasn't sent. Send it again in a moment."
}

const MsgResumeFirst = "resume is the first message after attached, and it is sent once."

// "Without an attached Planner".

func MsgNotAttached(docURL, repo string) string {
	return "Connect a machine to get a reply. Connect an agent client to " + docURL +
		" over the agent connection from a session in a checkout of " + repo + "."
}

func MsgOffline(login string) string {
	return "@" + login + "'s machine is offline, so this message wasn't sent. Send it again when it's back."
}

// MsgBusy is the spec's refusal of a message sent while the Planner works,
// for a client without steer-turn.
const MsgBusy = "chopin can't take messages while it works on this machine. Stop it to ask now."

// Protocol errors.
const (
	MsgTooLarge       = "A frame may hold at most 2 MiB (2,097,152 bytes) of UTF-8; this one was larger."
	MsgBinary         = "Binary frames are refused: send one JSON object per text frame."
	MsgAttachFirst    = "The first message must be attach, and nothing else may be sent until attached or refused."
	MsgSecondAttach   = "This connection is already attached; attach is sent once."
	MsgDeltaNoFeature = "A delta run card (stagesDelta) needs the run-stage-deltas feature, which this connection did not ask for."
)

func MsgMalformed(reason string) string {
	return truncateRunes("The message is malformed: "+reason+".", MaxNoteChars)
}

func MsgRepeatedRequest(id string) string {
	return "The request id " + truncateRunes(id, MaxIDChars) + " was already used on this connection. Use a fresh id, such as a UUID, for every input-request."
}

func MsgUnoffered(typ string) string {
	return typ + " belongs to a feature this connection did not ask for, or this server does not offer."
}

// Turn failures, shown in Chat under the message.
const (
	MsgStartTimeout   = "The Planner did not answer within 10 seconds, so its session was not started."
	MsgLinkClosed     = "The Planner's connection closed before the reply was finished."
	MsgAbortTimeout   = "The Planner did not confirm it stopped within 10 seconds, so the turn was ended."
	MsgTurnEnded      = "The turn has ended."
	MsgSessionEnded   = "The session has ended."
	MsgAccessRevoked  = "The Planner's access to this document was revoked."
	MsgIsolatedAsk    = "An isolated session gets no Decisions."
	MsgIsolatedTools  = "An isolated session may declare no tools of its own."
	MsgTooManyOpen    = "16 questions are already open on this connection. Wait for an answer, or cancel one, before asking another."
	MsgAskFailed      = "Chopin could not turn this question into Decisions."
	MsgHostToolFailed = "The tool failed in Chopin."
)

func MsgStartFailed(reason string) string {
	return truncateRunes("The Planner could not start a session: "+reason, MaxNoteChars)
}

func MsgRepeatedCall(id string) string {
	return "The Planner used the tool call id " + truncateRunes(id, MaxIDChars) + " twice in one turn."
}

func MsgToolBoundary(detail string) string {
	return "The Planner's tool calls were out of order: " + detail
}

func MsgNotATool(name string) string {
	return truncateRunes(name, MaxNameChars) + " is not one of this turn's tools."
}

func MsgBadToolInput(name string) string {
	return "The input of " + name + " is not valid JSON."
}

func MsgTooManyHostCalls(name string, most int) string {
	return fmt.Sprintf("Chopin runs at most %d host tool calls at once, so %s was not run. Wait for a result before calling again.",
		most, truncateRunes(name, MaxNameChars))
}

func MsgResultTooLarge(name string) string {
	return "The result of " + name + " is too large for one message."
}

func MsgHostToolName(name string) string {
	return truncateRunes(name, MaxNameChars) + " is the name of one of Chopin's host tools; the Planner's own tools need other names."
}

// MsgSteerNoTurn is the refusal of a steer the running turn cannot read yet.
const MsgSteerNoTurn = "The Planner's turn was starting or stopping, so it could not read the message."
