package jobs_test

// A failure that says it is final ends the job at once, whatever attempts
// it has left: a document too large to describe is not tried again.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/chopin-desktop/chopin/jobs"
)

func TestFinalFailureIsNotRetried(t *testing.T) {
	e := newEnv(t, 2)
	big := jobs.Source{Title: "Plan", Revision: 3, Text: strings.Repeat("x", 300<<10)} // 38 chunks, 75 turns
	summaries := jobs.NewSummaries(&docs{srcs: []jobs.Source{big}}, &scripted{})
	var mu sync.Mutex
	calls := 0
	e.start(summaries.Definition(), jobs.Definition{Type: "final@1", MaxAttempts: 3,
		Run: func(context.Context, jobs.Job) (jobs.Result, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return jobs.Result{}, &jobs.Failure{Reason: jobs.ReasonError, Final: true, Err: errors.New("cannot be done")}
		}})
	summaries.Use(e.runner)

	j := e.enqueue("final@1", e.docs[0], "k")
	if got := e.job(e.docs[0], j.ID, jobs.Failed); got.Attempts != 1 || got.Failures != 1 || got.Reason != jobs.ReasonError {
		t.Errorf("a final failure: %d attempts, %d failures, %s; want failed after 1 attempt", got.Attempts, got.Failures, got.Reason)
	}
	in, _ := json.Marshal(map[string]any{"revision": big.Revision, "hash": big.Hash()})
	d, err := e.runner.Enqueue(context.Background(), jobs.SummaryType, e.docs[1], jobs.SummaryKey(big.Revision, big.Hash()), in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.job(e.docs[1], d.ID, jobs.Failed); got.Attempts != 1 || got.Reason != jobs.ReasonTooLarge {
		t.Errorf("a document too large to describe: %d attempts, %s; want failed too-large after 1 attempt", got.Attempts, got.Reason)
	}
	mu.Lock()
	defer mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if calls != 1 || len(e.backoffs) != 0 {
		t.Errorf("%d attempts made, backoff asked for %v; want 1 and none", calls, e.backoffs)
	}
}
