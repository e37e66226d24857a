package picture

// Two pictures of MaxPixels decoded at once: the second waits for the
// first, since either holds the whole decoding budget.

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestTwoLargestDecodesDoNotOverlap(t *testing.T) {
	const w, h = 10_000, MaxPixels / 10_000
	var firstDone atomic.Bool
	var wg sync.WaitGroup
	secondRan := make(chan bool, 1)
	err := withBudget(w, h, func() error {
		wg.Go(func() {
			withBudget(w, h, func() error {
				secondRan <- firstDone.Load()
				return nil
			})
		})
		// While this one decodes, the budget has not a pixel left for any
		// other picture, however small.
		if budget.TryAcquire(1) {
			budget.Release(1)
			t.Error("a pixel of the budget was free while a picture of MaxPixels decoded")
		}
		firstDone.Store(true)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !<-secondRan {
		t.Error("the second picture of MaxPixels decoded while the first still did")
	}
	// And the budget is whole again.
	if !budget.TryAcquire(budgetPixels) {
		t.Fatal("the budget was not given back")
	}
	budget.Release(budgetPixels)
}
