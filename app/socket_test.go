package app

// An idle browser socket holds one goroutine, its reader: nothing waits
// to write for it, and its pings are timers.

import (
	"runtime"
	"testing"
	"time"
)

func TestIdleSocketsHoldOneGoroutineEach(t *testing.T) {
	const tabs = 30
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Idle")
	first := ta.DialRoom(ch.ID) // the room is open
	first.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
	first.Until("plan:snapshot")
	settled := func() int {
		// Opening a document starts work that ends: wait for the count to
		// stop falling.
		n, still := runtime.NumGoroutine(), 0
		for deadline := time.Now().Add(20 * time.Second); still < 5 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			if m := runtime.NumGoroutine(); m < n {
				n, still = m, 0
			} else {
				n, still = m, still+1
			}
		}
		return n
	}
	before := settled()
	for range tabs {
		rc := ta.DialRoom(ch.ID)
		rc.Send(map[string]any{"type": "plan:open", "epoch": "", "version": 0})
		rc.Until("plan:snapshot")
	}
	// The test's client sockets start no goroutines of their own.
	if grown := settled() - before; grown > tabs+3 {
		t.Errorf("%d idle sockets hold %d goroutines", tabs, grown)
	}
}
