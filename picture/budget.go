package picture

import (
	"context"
	"math"
	"runtime/debug"
	"sync"

	"golang.org/x/sync/semaphore"
)

// The process-wide budget for pictures being decoded. Decoding a picture
// holds all its pixels at once (four bytes each), and the bytes that cost
// that can be a few kilobytes from anyone, so every decode in the process
// first takes its pixels from one budget: one picture of MaxPixels at a
// time, or several smaller ones. A caller waits its turn rather than
// adding its picture to the memory already in use. After a large picture
// the memory it held is given back to the system, so a burst of them does
// not leave the process large. While any picture is being decoded, the
// process's soft memory limit (if one is set) is lifted: its pixels are live
// until the copy is made, and a collector held to a limit below them would
// run without pause.

// budgetPixels is how many source pixels may be decoded at once in the
// process: one picture as large as MaxPixels.
const budgetPixels = MaxPixels

// giveBackPixels is the size of picture after which the memory it held is
// returned to the system at once rather than when the runtime gets to it.
const giveBackPixels = 4_000_000

var budget = semaphore.NewWeighted(budgetPixels)

// withBudget runs work holding w×h pixels of the budget (at least one,
// at most all of it).
func withBudget(w, h int, work func() error) error {
	n := min(max(int64(w)*int64(h), 1), budgetPixels)
	if err := budget.Acquire(context.Background(), n); err != nil {
		return err
	}
	defer budget.Release(n)
	liftMemoryLimit()
	defer restoreMemoryLimit()
	err := work()
	if n >= giveBackPixels {
		debug.FreeOSMemory()
	}
	return err
}

// lifted counts the decodes under way and keeps the memory limit they lifted.
var lifted struct {
	sync.Mutex
	decodes int
	limit   int64
}

// liftMemoryLimit lifts the soft memory limit for one more decode.
func liftMemoryLimit() {
	lifted.Lock()
	defer lifted.Unlock()
	if lifted.decodes == 0 {
		lifted.limit = debug.SetMemoryLimit(math.MaxInt64)
	}
	lifted.decodes++
}

// restoreMemoryLimit sets the limit back once the last decode has ended.
func restoreMemoryLimit() {
	lifted.Lock()
	defer lifted.Unlock()
	lifted.decodes--
	if lifted.decodes == 0 {
		debug.SetMemoryLimit(lifted.limit)
	}
}
