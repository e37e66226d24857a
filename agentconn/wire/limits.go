package wire

import "time"

// Every limit of the spec, in one place: the version, the shared limits of
// "Frames" and the message sections, and the default durations the spec
// gives the operator's settings.

// Subprotocol is the only version this protocol package speaks.
const Subprotocol = "chopin.agent.v1"

// ProtocolVersion is the number attach carries for Subprotocol.
const ProtocolVersion = 1

// The shared limits of the spec's "Frames" section. Lengths in characters are
// counted in Unicode code points: a client that cuts by UTF-16 code units (as
// JavaScript does) never exceeds them, and neither does one that cuts by runes.
const (
	MaxFrameBytes = 2 << 20 // one text frame, in bytes of UTF-8

	MaxIDChars    = 128  // session, turn, request, toolCallId, run and stage ids...
	MaxNameChars  = 128  // tool names, toolName, names entries
	MaxShortChars = 128  // question header, finishReason.raw
	MaxNoteChars  = 4000 // message, titles, error, question text, labels...

	maxDocumentRef     = 2048
	maxCheckoutOrigin  = 2048
	maxCheckoutBranch  = 256
	maxCheckoutHead    = 128
	maxRepository      = 257
	maxURL             = 2048
	maxFeatures        = 16
	MaxTools           = 256
	maxToolDescription = 64000
	maxRunCards        = 64
	maxRunStages       = 64
	maxRunIDs          = 64 // active, paused, parentIds

	// MaxOpenRequests is how many input-requests may wait at once on a
	// link; the next one is answered failed.
	MaxOpenRequests = 16
)

// The limits of a question call ("Questions"), which the room's Decisions
// and the ask host tool's schema share.
const (
	MaxQuestions    = 16    // a questionnaire's questions, at least 1
	MaxOptions      = 32    // a question's options
	MaxChoices      = 32    // a select's choices
	MaxPreviewChars = 16000 // an option's preview
)

// The spec's defaults of the operator's settings (DESIGN.md section 4).
const (
	DefaultPing          = 15 * time.Second
	DefaultTimeout       = 120 * time.Second
	DefaultMaxSilence    = 15 * time.Minute
	DefaultGrace         = 2 * time.Minute
	DefaultRecheck       = 5 * time.Minute
	DefaultAnswerTimeout = 10 * time.Second // start, abort, stop and resume
)
