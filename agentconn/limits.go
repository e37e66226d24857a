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
)
