//go:build !race

package room

// raceBuild is set when the tests run under the race detector, whose own
// bookkeeping swamps allocation counts.
const raceBuild = false
