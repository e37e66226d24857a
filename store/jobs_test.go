package store

// Jobs and descriptions in the store: the same key returns the job, a new
// one supersedes, a projection leaves updated_at alone and happens once, and
// a document keeps only its latest jobs.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestJobsAndDescriptions(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	ch, err := s.CreateChannel(ctx, r.NodeID, "Storage")
	if err != nil {
		t.Fatal(err)
	}
	job := func(key string, at int64) Job {
		return Job{ID: "job-" + key, Type: "t@1", Target: ch.ID, Key: key, Input: json.RawMessage(`{}`),
			State: "pending", MaxAttempts: 2, NotBefore: at, CreatedAt: at, UpdatedAt: at}
	}
	first, created, err := s.EnsureJob(ctx, job("k1", 1))
	if err != nil || !created {
		t.Fatal(created, err)
	}
	again, created, err := s.EnsureJob(ctx, job("k1", 2))
	if err != nil || created || again.ID != first.ID {
		t.Errorf("the same key: %+v, created %v, %v", again, created, err)
	}
	other := job("k1", 3)
	other.Input = json.RawMessage(`{"x":1}`)
	if _, _, err := s.EnsureJob(ctx, other); !errors.Is(err, ErrJobConflict) {
		t.Errorf("the same key with other input: %v", err)
	}
	if _, _, err := s.EnsureJob(ctx, job("k2", 4)); err != nil {
		t.Fatal(err)
	}
	js, _ := s.TargetJobs(ctx, ch.ID, 10)
	if len(js) != 2 || js[0].Key != "k2" || js[0].State != "pending" || js[1].State != "superseded" {
		t.Fatalf("after a new key: %+v", js)
	}

	// Completing projects the description once, leaving updated_at alone.
	running := js[0]
	running.State = "running"
	if ok, err := s.UpdateJob(ctx, running, "pending"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	d := &Description{Target: ch.ID, Text: "Plan for storage", SourceRevision: 3, SourceHash: "h", Generator: "t@1", JobID: running.ID, ProjectedAt: 9}
	for i, want := range []bool{true, false} {
		ok, err := s.CompleteJob(ctx, running.ID, json.RawMessage(`{}`), d, 9)
		if ok != want || err != nil {
			t.Errorf("complete #%d: %v, %v", i+1, ok, err)
		}
	}
	got, _ := s.Channel(ctx, ch.ID)
	if got.Description == nil || *got.Description != "Plan for storage" || got.DescriptionRevision != 1 || got.UpdatedAt != ch.UpdatedAt {
		t.Errorf("after the projection: %+v", got)
	}
	if page, _ := s.ListChannels(ctx, r.NodeID, ListOptions{Query: "PLAN FOR"}); len(page.Channels) != 1 {
		t.Errorf("the description is not searched")
	}

	// Only the latest jobs stay, and the one the description came from.
	for i := range 30 {
		if _, _, err := s.EnsureJob(ctx, job(fmt.Sprintf("n%02d", i), int64(10+i))); err != nil {
			t.Fatal(err)
		}
	}
	js, _ = s.TargetJobs(ctx, ch.ID, 100)
	kept := map[string]bool{}
	for _, j := range js {
		kept[j.ID] = true
	}
	if len(js) != KeptJobs+1 || !kept[running.ID] || !kept["job-n29"] || kept["job-n00"] {
		t.Errorf("%d jobs kept (description's kept %v)", len(js), kept[running.ID])
	}
}
