package app

// The lists the docs call "oldest first" keep the order things were made
// in, also when many are made in the same millisecond, and after a restart.

import (
	"testing"
)

// 120 comment:start frames sent back to back: the threads come back in the
// order they were started, from the HTTP list and comment:sync, before and
// after a restart.
func TestCommentThreadsKeepTheirOrder(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	rev := ta.putPlan(t, ch.ID, 0, commentPlan)
	rc := ta.DialRoom(ch.ID)
	rc.Until("comment:sync")
	const n = 120
	for i := range n {
		start := newThreadFor(t, commentPlan, rev, "Postgres for everything", "Note")
		start["id"] = "s" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		rc.Send(start)
	}
	var made []string
	for len(made) < n {
		m := rc.Next()
		switch m["type"] {
		case "comment:started":
			made = append(made, m["thread"].(string))
		case "error":
			t.Fatalf("comment:start refused: %v", m)
		}
	}
	check := func(when string, ta *testApp) {
		t.Helper()
		got := ta.threads(t, ch.ID).Threads
		if len(got) != n {
			t.Fatalf("%s: %d threads, want %d", when, len(got), n)
		}
		for i, th := range got {
			if th.ID != made[i] {
				t.Fatalf("%s: thread %d is %s, want %s (the order they were started in)", when, i, th.ID, made[i])
			}
		}
		rc := ta.DialRoom(ch.ID)
		sync := rc.Until("comment:sync")["threads"].([]any)
		for i, th := range sync {
			if id := th.(map[string]any)["id"]; id != made[i] {
				t.Fatalf("%s: comment:sync's thread %d is %s, want %s", when, i, id, made[i])
			}
		}
	}
	check("live", ta)
	cfg := ta.app.cfg
	ta.Stop()
	ta = startAppWith(t, cfg)
	check("after a restart", ta)
}
