package main

// The server's soft memory limit. Go's collector lets the heap grow to twice
// what is live before it collects; what an agent can make live for long is
// its link's send queue (about 16 MiB), so an agent that stops reading would
// otherwise have the process hold twice that. A soft limit makes the
// collector run sooner instead, and only while the heap is near it; decoding
// a picture lifts it (package picture), since a picture's pixels are live
// for as long as it is being decoded and may be far larger.

import (
	"os"
	"runtime/debug"
)

// softMemoryLimit is the Go runtime's memory the collector keeps under when
// it can: the heap of an idle server is about 5 MB.
const softMemoryLimit = 40 << 20

// limitMemory sets the soft memory limit, unless GOMEMLIMIT chose one.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
}
