package picture

// The budget lifts the process's soft memory limit while a picture decodes.

import (
	"math"
	"runtime/debug"
	"sync"
	"testing"
)

func TestDecodingLiftsTheMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(64 << 20)
	defer debug.SetMemoryLimit(before)
	var wg sync.WaitGroup
	inside := make(chan int64, 2)
	started := make(chan struct{})
	release := make(chan struct{})
	wg.Go(func() {
		withBudget(10, 10, func() error {
			close(started)
			<-release
			inside <- debug.SetMemoryLimit(-1)
			return nil
		})
	})
	<-started
	// A second decode, overlapping the first, ends first: the limit stays
	// lifted until the last one ends.
	withBudget(10, 10, func() error { inside <- debug.SetMemoryLimit(-1); return nil })
	close(release)
	wg.Wait()
	for range 2 {
		if got := <-inside; got != math.MaxInt64 {
			t.Errorf("the limit while decoding is %d, want none", got)
		}
	}
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Errorf("the limit after decoding is %d, want %d", got, 64<<20)
	}
}
