package agentconn

import (
	"fmt"
	"time"
)

// Every sentence a person or a client reads, in one place. The ones the spec
// gives are its exact words (tests assert them byte for byte); the others say
// what happened and what to do.

// Refusal and error codes.
const (
	codeUnsupportedVersion  = "unsupported-version"
	codeRepositoryForbidden = "repository-forbidden"
	codePlannerAttached     = "planner-attached"
	codeDocumentUnavailable = "document-unavailable"
	codeDocumentArchived    = "document-archived"
	codeAccessRevoked       = "access-revoked"
	codeUnavailable         = "unavailable"
	codeMalformed           = "malformed-message"
	codeProtocol            = "protocol"
	codeTooLarge            = "message-too-large"
)

// Close codes ("Closing").
const (
	closeDetached     = 1000
	closeUnresponsive = 1001
	closePolicy       = 1008
	closeTooLarge     = 1009
	closeUnavailable  = 1011
	closeRestarting   = 1012
	closeSignIn       = 4401
	closeForbidden    = 4403
	closeUnknownDoc   = 4404
	closeAttached     = 4409
	closeVersion      = 4426
)

// refusalClose maps a refusal code to its close code.
var refusalClose = map[string]int{
	codeUnsupportedVersion:  closeVersion,
	codeRepositoryForbidden: closeForbidden,
	codeAccessRevoked:       closeForbidden,
	codePlannerAttached:     closeAttached,
	codeDocumentUnavailable: closeUnknownDoc,
	codeDocumentArchived:    closeUnknownDoc,
	codeUnavailable:         closeUnavailable,
}

// specTime is how the spec writes an instant: 2026-10-10T19:42:00.000Z.
func specTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

const oneAgent = " A document has one agent connected at a time."

func msgPlannerConnected(login string) string {
	return login + " is connected to this document." + oneAgent
}

func msgPlannerKeeps(login string, until time.Time) string {
	return fmt.Sprintf("%s disconnected from this document and keeps it until %s unless they connect again.%s",
		login, specTime(until), oneAgent)
}

func msgReset(login string) string {
	return "A repository writer reset this document's connection, so " + login + " is no longer connected. Connect again to resume."
}

func msgReleased(login string) string {
	return "This document's connection was released, so " + login + " is no longer connected. Connect again to resume."
}

func msgArchived(login string) string {
	return "This document was archived, so " + login + " is no longer connected. Restore it in Chopin, then connect again."
}

func msgDeleted(login string) string {
	return "This document was deleted, so " + login + " is no longer connected."
}

func msgAccessLost(login, repo string) string {
	return login + " can no longer push to or administer " + repo + ", so the connection was closed."
}

func msgUnsupportedVersion(v int) string {
	return fmt.Sprintf("This server speaks version %d of the agent connection (%s), not version %d. Attach with version %d.",
		ProtocolVersion, Subprotocol, v, ProtocolVersion)
}

const (
	msgDocumentUnavailable = "No document matches this id or URL, or it is being deleted. Check the document's URL in Chopin."
	msgDocumentArchived    = "This document is archived. Restore it in Chopin, then connect again."
	msgUnavailable         = "Chopin could not check the document or the account just now. Try again."
)

func msgRepositoryForbidden(login, repo string) string {
	return login + " cannot push to or administer " + repo + ", so it cannot be this document's Planner."
}

// "Without an attached Planner".

func msgNotAttached(docURL, repo string) string {
	return "Connect a machine to get a reply. Connect an agent client to " + docURL +
		" over the agent connection from a session in a checkout of " + repo + "."
}

func msgOffline(login string) string {
	return "@" + login + "'s machine is offline, so this message wasn't sent. Send it again when it's back."
}

// msgBusy is the spec's refusal of a message sent while the Planner works,
// for a client without steer-turn.
const msgBusy = "chopin can't take messages while it works on this machine. Stop it to ask now."

// Protocol errors.
const (
	msgTooLarge       = "A frame may hold at most 2 MiB (2,097,152 bytes) of UTF-8; this one was larger."
	msgBinary         = "Binary frames are refused: send one JSON object per text frame."
	msgAttachFirst    = "The first message must be attach, and nothing else may be sent until attached or refused."
	msgSecondAttach   = "This connection is already attached; attach is sent once."
	msgDeltaNoFeature = "A delta run card (stagesDelta) needs the run-stage-deltas feature, which this connection did not ask for."
)

func msgMalformed(reason string) string {
	return truncateRunes("The message is malformed: "+reason+".", maxNote)
}

func msgRepeatedRequest(id string) string {
	return "The request id " + truncateRunes(id, maxID) + " was already used on this connection. Use a fresh id, such as a UUID, for every input-request."
}

func msgUnoffered(typ string) string {
	return typ + " belongs to a feature this connection did not ask for, or this server does not offer."
}

// Turn failures, shown in Chat under the message.
const (
	msgStartTimeout   = "The Planner did not answer within 10 seconds, so its session was not started."
	msgLinkClosed     = "The Planner's connection closed before the reply was finished."
	msgAbortTimeout   = "The Planner did not confirm it stopped within 10 seconds, so the turn was ended."
	msgTurnEnded      = "The turn has ended."
	msgSessionEnded   = "The session has ended."
	msgAccessRevoked  = "The Planner's access to this document was revoked."
	msgIsolatedAsk    = "An isolated session gets no Decisions."
	msgIsolatedTools  = "An isolated session may declare no tools of its own."
	msgTooManyOpen    = "16 questions are already open on this connection. Wait for an answer, or cancel one, before asking another."
	msgAskFailed      = "Chopin could not turn this question into Decisions."
	msgHostToolFailed = "The tool failed in Chopin."
)

func msgStartFailed(reason string) string {
	return truncateRunes("The Planner could not start a session: "+reason, maxNote)
}

func msgRepeatedCall(id string) string {
	return "The Planner used the tool call id " + truncateRunes(id, maxID) + " twice in one turn."
}

func msgToolBoundary(detail string) string {
	return "The Planner's tool calls were out of order: " + detail
}

func msgNotATool(name string) string {
	return truncateRunes(name, maxName) + " is not one of this turn's tools."
}

func msgBadToolInput(name string) string {
	return "The input of " + name + " is not valid JSON."
}

func msgResultTooLarge(name string) string {
	return "The result of " + name + " is too large for one message."
}

func msgHostToolName(name string) string {
	return truncateRunes(name, maxName) + " is the name of one of Chopin's host tools; the Planner's own tools need other names."
}
