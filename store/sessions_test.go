package store

import (
	"context"
	"testing"
	"time"
)

// A browser session lasts 30 days unused: each use starts the 30 days
// again; an expired one is refused and pruned; all can be signed out.
func TestBrowserSessionsExpireUnused(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	now := time.UnixMilli(1_800_000_000_000)
	s.SetClock(func() time.Time { return now })
	for _, tok := range []string{"kept", "idle", "other"} {
		if err := s.AddBrowserSession(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(20 * 24 * time.Hour)
	if err := s.TouchBrowserSession(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(11 * 24 * time.Hour) // 31 days after they began, 11 after "kept" was used
	for tok, want := range map[string]bool{"kept": true, "idle": false, "other": false, "never": false} {
		if ok, err := s.BrowserSession(ctx, tok); err != nil || ok != want {
			t.Errorf("session %q: %v, %v; want %v", tok, ok, err, want)
		}
	}
	if n, err := s.PruneBrowserSessions(ctx); err != nil || n != 2 {
		t.Errorf("pruned %d, %v; want 2", n, err)
	}
	if n, err := s.SignOutEverywhere(ctx); err != nil || n != 1 {
		t.Errorf("signed out %d, %v; want 1", n, err)
	}
	if ok, _ := s.BrowserSession(ctx, "kept"); ok {
		t.Error("a session outlived signing out everywhere")
	}
}
