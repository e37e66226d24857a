package agentconn

import "time"

// Subprotocol is the only version this server speaks.
const Subprotocol = "chopin.agent.v1"

// ProtocolVersion is the number attach carries for Subprotocol.
const ProtocolVersion = 1

// The shared limits of the spec's "Frames" section. Lengths in characters are
// counted in Unicode code points: a client that cuts by UTF-16 code units (as
// JavaScript does) never exceeds them, and neither does one that cuts by runes.
const (
	MaxFrameBytes = 2 << 20 // one text frame, in bytes of UTF-8

	maxID    = 128  // session, turn, request, toolCallId, run and stage ids...
	maxName  = 128  // tool names, toolName, names entries
	maxShort = 128  // question header, finishReason.raw
	maxNote  = 4000 // message, titles, error, question text, labels...

	maxDocumentRef     = 2048
	maxCheckoutOrigin  = 2048
	maxCheckoutBranch  = 256
	maxCheckoutHead    = 128
	maxRepository      = 257
	maxURL             = 2048
	maxFeatures        = 16
	maxTools           = 256
	maxToolDescription = 64000
	maxQuestions       = 16
	maxOptions         = 32
	maxChoices         = 32
	maxPreview         = 16000
	maxRunCards        = 64
	maxRunStages       = 64
	maxRunIDs          = 64 // active, paused, parentIds

	// maxOpenRequests is how many input-requests may wait at once on a link;
	// the next one is answered failed.
	maxOpenRequests = 16
	// rememberedRequests is how many received request ids a link remembers
	// after they close, so a repeat is caught as a protocol violation.
	rememberedRequests = 1024

	// maxQueueBytes bounds what the server queues for a client that reads
	// slowly ("about 16 MiB" in Pings).
	maxQueueBytes = 16 << 20
)

// Defaults of the operator's settings (DESIGN.md section 4).
const (
	DefaultPing          = 15 * time.Second
	DefaultTimeout       = 120 * time.Second
	DefaultMaxSilence    = 15 * time.Minute
	DefaultGrace         = 2 * time.Minute
	DefaultRecheck       = 5 * time.Minute
	DefaultAnswerTimeout = 10 * time.Second // start, abort, stop and resume
)
