package store

import (
	"context"
	"errors"
	"testing"
)

func TestModelChoiceAndReplyLinks(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := mustRepo(t, s, "octo/plans")
	a := mustChannel(t, s, r.NodeID, "A")
	if _, err := s.ModelChoice(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no choice: %v", err)
	}
	c := ModelChoice{Model: "m1", ThinkingLevel: "低", ModelName: "Model One"}
	if err := s.SaveModelChoice(ctx, a.ID, c); err != nil {
		t.Fatal(err)
	}
	// The fallback is recorded once, and only for the choice it was about.
	if ok, err := s.MarkModelFellBack(ctx, a.ID, "m2", "低"); ok || err != nil {
		t.Fatalf("mark another choice: %v %v", ok, err)
	}
	if ok, err := s.MarkModelFellBack(ctx, a.ID, "m1", "低"); !ok || err != nil {
		t.Fatalf("mark: %v %v", ok, err)
	}
	if ok, _ := s.MarkModelFellBack(ctx, a.ID, "m1", "低"); ok {
		t.Fatal("marked twice")
	}
	if got, err := s.ModelChoice(ctx, a.ID); err != nil || got != (ModelChoice{Model: "m1", ThinkingLevel: "低", ModelName: "Model One", FellBack: true}) {
		t.Fatalf("choice %+v %v", got, err)
	}
	// A new choice starts unmarked; the zero choice removes it.
	if err := s.SaveModelChoice(ctx, a.ID, ModelChoice{ThinkingLevel: "high"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ModelChoice(ctx, a.ID); got != (ModelChoice{ThinkingLevel: "high"}) {
		t.Fatalf("replaced choice %+v", got)
	}
	if err := s.SaveModelChoice(ctx, a.ID, ModelChoice{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ModelChoice(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cleared choice: %v", err)
	}

	if _, err := s.ReplyTo(ctx, a.ID, "msg1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no reply: %v", err)
	}
	for _, reply := range []string{"reply1", "reply2"} {
		if err := s.SaveReplyTo(ctx, a.ID, "msg1", reply); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.ReplyTo(ctx, a.ID, "msg1"); err != nil || got != "reply2" {
		t.Fatalf("reply %q %v", got, err)
	}
	// Deleting the document deletes both.
	if err := s.SaveModelChoice(ctx, a.ID, c); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ArchiveChannel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChannel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM planner_replies) + (SELECT count(*) FROM planner_model_choices)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows left after deleting the document: %d %v", n, err)
	}
}
