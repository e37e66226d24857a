package agentconn

// The server's own bounds, which the spec leaves to the implementation; the
// spec's limits are the wire package's.
const (
	// rememberedRequests is how many received request ids a link remembers
	// after they close, so a repeat is caught as a protocol violation.
	rememberedRequests = 1024

	// maxQueueBytes bounds what the server queues for a client that reads
	// slowly ("about 16 MiB" in Pings).
	maxQueueBytes = 16 << 20

	// maxHostCallsAtOnce bounds the host tool calls a link runs at once.
	// Each holds its input and builds a result, so a client that calls
	// without waiting for results (or without reading them) would
	// otherwise hold the server to as many as it sends; a call past the
	// bound fails at once with a tool error the model can read.
	maxHostCallsAtOnce = 16
)
