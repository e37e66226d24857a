package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// BenchmarkHistoryYear measures the database growth of a plan's history: a
// long plan (about 50 KB) edited for a simulated year, 300 changes a day
// (typing, deletions, lines pasted over others), committed as the room commits them
// (store.CommitPlan, a checkpoint every 200), pruned at the end of each day
// with the default policy (30 days of detail, at most 10,000 changes, then
// one version a day, at most 365). Reports the history's bytes per change
// made, in the detail window and over the year, and its size at the end;
// its size at days 30, 180 and 365 and how much it grew a day over the
// second half of the year (the detail window full, the pruning keeping
// pace); and the bound the policy gives, which the size must stay within:
// the detail window's bytes as measured when it first filled (day 30),
// plus for each of the at most 365 versions kept beyond it a step no larger
// than a day's changes at the detail's bytes per change, plus the whole
// text every snapshotStride-th of them keeps. It fails past the bound, or
// with more versions kept than the policy allows.
// Run with -benchtime 1x: each iteration is a whole year.
func BenchmarkHistoryYear(b *testing.B) {
	const perDay, days = 300, 365
	for range b.N {
		ta := startApp(b)
		ta.AddRepository("octo/plans")
		ch := ta.CreateDocument("octo/plans", "Year")
		a := ta.app
		ctx := context.Background()
		day0 := time.Date(2026, 1, 1, 8, 0, 0, 0, time.Local)
		var now time.Time
		a.store.SetClock(func() time.Time { return now })

		rng := rand.New(rand.NewPCG(1, 2))
		var sb strings.Builder
		for i := 0; sb.Len() < 50_000; i++ {
			fmt.Fprintf(&sb, "## Section %d\n\nA paragraph of the plan that says what this part is about, line %d.\n\n", i, i)
		}
		text := sb.String()
		var version int64
		now = day0
		if err := a.store.CheckpointPlan(ctx, ch.ID, store.PlanCheckpoint{Epoch: "e", Version: 0, Source: text}); err != nil {
			b.Fatal(err)
		}
		author := store.PlanAuthor{Kind: "person", Name: "ada"}
		var detailBytes, halfBytes int64
		b.ResetTimer()
		for day := range days {
			for i := range perDay {
				now = day0.Add(time.Duration(day)*24*time.Hour + time.Duration(i)*2*time.Minute)
				pos := rng.IntN(len(text))
				var cs json.RawMessage
				switch k := rng.IntN(20); {
				case k < 11: // a keystroke
					cs = replaceAt(pos, 0, len(text), "e")
					text = text[:pos] + "e" + text[pos:]
				case k < 19: // a deletion
					cs = replaceAt(pos, 1, len(text), "")
					text = text[:pos] + text[pos+1:]
				default: // a line pasted over as much text
					line := "\nA pasted line of the plan, about sixty characters long.\n"
					pos = min(pos, len(text)-len(line))
					cs = replaceAt(pos, len(line), len(text), line)
					text = text[:pos] + line + text[pos+len(line):]
				}
				version++
				if err := a.store.CommitPlan(ctx, ch.ID, []store.PlanUpdate{{Version: version, ClientID: "tab", Changes: cs, Author: author}}); err != nil {
					b.Fatal(err)
				}
				if version%200 == 0 {
					if err := a.store.CheckpointPlan(ctx, ch.ID, store.PlanCheckpoint{Epoch: "e", Version: version, Source: text, KeepAfter: version - 200}); err != nil {
						b.Fatal(err)
					}
				}
			}
			now = now.Add(time.Hour)
			if err := a.pruneHistory(ctx); err != nil {
				b.Fatal(err)
			}
			if day == 29 { // the detail window, before anything was pruned
				if detailBytes, _ = a.store.HistoryBytes(ctx); detailBytes == 0 {
					b.Fatal("no history measured")
				}
			}
			if day == 179 {
				if halfBytes, _ = a.store.HistoryBytes(ctx); halfBytes == 0 {
					b.Fatal("no history measured")
				}
			}
		}
		b.StopTimer()
		total, err := a.store.HistoryBytes(ctx)
		if err != nil {
			b.Fatal(err)
		}
		got, err := a.versionText(ctx, ch.ID, version)
		if err != nil || got != text {
			b.Fatalf("the last version does not read back: %v", err)
		}
		vs, _ := a.store.History(ctx, ch.ID, 0, 1_000_000)
		policy := a.historyPolicy()
		perChange := float64(detailBytes) / float64(30*perDay)
		bound := float64(detailBytes) + float64(policy.Snapshots)*perDay*perChange +
			float64(policy.Snapshots/snapshotStride+1)*float64(len(text))
		if float64(total) > bound {
			b.Errorf("the history holds %d KB, past the policy's bound of %.0f KB", total/1024, bound/1024)
		}
		if most := min(policy.DetailDays*perDay, policy.DetailChanges) + policy.Snapshots; len(vs) > most {
			b.Errorf("%d versions kept, more than the policy's %d", len(vs), most)
		}
		b.ReportMetric(bound/1024, "bound-KB")
		b.ReportMetric(float64(detailBytes)/1024, "day30-KB")
		b.ReportMetric(float64(halfBytes)/1024, "day180-KB")
		b.ReportMetric(float64(total-halfBytes)/1024/float64(days-180), "KB/day-after-180")
		b.ReportMetric(float64(detailBytes)/float64(30*perDay), "detail-B/change")
		b.ReportMetric(float64(total)/float64(days*perDay), "year-B/change")
		b.ReportMetric(float64(total)/1024, "history-KB")
		b.ReportMetric(float64(len(vs)), "versions-kept")
		b.ReportMetric(float64(len(text))/1024, "plan-KB")
		ta.Stop()
	}
}

// timelineDoc makes a document whose history holds n changes, committed
// as the room commits them (store.CommitPlan, a checkpoint every 200): a
// repeating day of work, each a session of its own: a person's burst of 40
// keystrokes, ten minutes later a Planner turn of 5 edits, ten minutes
// later an MCP client's update, on a plan of about 50 KB. It returns the
// document's id and its text at the end.
func timelineDoc(b *testing.B, a *App, ch string, n int) string {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for i := 0; sb.Len() < 50_000; i++ {
		fmt.Fprintf(&sb, "## Section %d\n\nA paragraph of the plan that says what this part is about, line %d.\n\n", i, i)
	}
	text := sb.String()
	t0 := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	var now time.Time
	a.store.SetClock(func() time.Time { return now })
	now = t0
	if err := a.store.CheckpointPlan(ctx, ch, store.PlanCheckpoint{Epoch: "e", Version: 0, Source: text}); err != nil {
		b.Fatal(err)
	}
	var version int64
	session := func(author store.PlanAuthor, count int) {
		ups := make([]store.PlanUpdate, 0, count)
		for range count {
			pos := rng.IntN(len(text))
			var cs json.RawMessage
			if rng.IntN(3) == 0 && pos < len(text)-1 {
				cs = replaceAt(pos, 1, len(text), "")
				text = text[:pos] + text[pos+1:]
			} else {
				cs = replaceAt(pos, 0, len(text), "e")
				text = text[:pos] + "e" + text[pos:]
			}
			version++
			ups = append(ups, store.PlanUpdate{Version: version, ClientID: "c", Changes: cs, Author: author})
			if version%200 == 0 {
				if err := a.store.CommitPlan(ctx, ch, ups); err != nil {
					b.Fatal(err)
				}
				ups = ups[:0]
				if err := a.store.CheckpointPlan(ctx, ch, store.PlanCheckpoint{Epoch: "e", Version: version, Source: text, KeepAfter: version - 200}); err != nil {
					b.Fatal(err)
				}
			}
		}
		if len(ups) > 0 {
			if err := a.store.CommitPlan(ctx, ch, ups); err != nil {
				b.Fatal(err)
			}
		}
		now = now.Add(10 * time.Minute)
	}
	for turn := 0; int(version) < n; turn++ {
		session(store.PlanAuthor{Kind: "person", Name: "ada"}, min(40, n-int(version)))
		session(store.PlanAuthor{Kind: "planner", Turn: fmt.Sprintf("t%d", turn), Model: "m"}, min(5, n-int(version)))
		session(store.PlanAuthor{Kind: "mcp", Name: "codex"}, min(1, n-int(version)))
	}
	return text
}

// BenchmarkTimeline measures the first page of the timeline (30 sessions,
// each with its summary and events) of a document with 100,000 changes,
// through the HTTP route and in process, against a bare SQLite query of
// the same rows (the page's versions and the one before them) in the same
// run: ratio is the route's time over the query's.
func BenchmarkTimeline(b *testing.B) {
	const changes = 100_000
	// Every change kept in detail: the most rows a page can cover, and no
	// pruning while it is measured.
	cfg := testConfig(b, b.TempDir())
	cfg.HistoryDetailDays, cfg.HistoryDetailChanges = 100_000, 1_000_000
	ta := startAppWith(b, cfg)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Long")
	a := ta.app
	ctx := context.Background()
	timelineDoc(b, a, ch.ID, changes)
	sessions, _, err := a.timeline(ctx, ch.ID, 0, defaultTimelinePage)
	if err != nil || len(sessions) != defaultTimelinePage {
		b.Fatalf("the first page: %d sessions, %v", len(sessions), err)
	}
	rows := 1 // the version before the page
	for _, s := range sessions {
		rows += s.Versions
		if s.Summary == "" || s.Summary == "cannot be rebuilt" {
			b.Fatalf("session %d-%d: summary %q", s.From, s.To, s.Summary)
		}
	}

	db, err := sql.Open("sqlite", "file:"+filepath.Join(a.cfg.DataDir, databaseFile)+"?_pragma=query_only(1)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	bare := func() {
		rs, err := db.QueryContext(ctx, `SELECT version, at, kind, author, turn, model, changes FROM plan_history
			WHERE channel_id = ? ORDER BY version DESC LIMIT ?`, ch.ID, rows)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rs.Next() {
			var v, at int64
			var kind, author, turn, model string
			var changes sql.NullString
			if err := rs.Scan(&v, &at, &kind, &author, &turn, &model, &changes); err != nil {
				b.Fatal(err)
			}
			n++
		}
		rs.Close()
		if n != rows {
			b.Fatalf("the bare query read %d rows, not %d", n, rows)
		}
	}
	route := func() {
		r := ta.Do("GET", "/api/channels/"+ch.ID+"/timeline", nil)
		if r.Status != 200 {
			b.Fatalf("timeline: %d %s", r.Status, r.Body)
		}
	}
	timeOf := func(f func(), n int) time.Duration {
		start := time.Now()
		for range n {
			f()
		}
		return time.Since(start) / time.Duration(n)
	}
	b.Run("route", func(b *testing.B) {
		for b.Loop() {
			route()
		}
		b.ReportMetric(float64(rows), "rows")
	})
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := a.timeline(ctx, ch.ID, 0, defaultTimelinePage); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare-query", func(b *testing.B) {
		for b.Loop() {
			bare()
		}
	})
	// The ratio, the two measured in turn in one stretch so that both see
	// the same machine.
	b.Run("ratio", func(b *testing.B) {
		var q, r time.Duration
		for b.Loop() {
			q += timeOf(bare, 5)
			r += timeOf(route, 5)
		}
		b.ReportMetric(float64(r.Microseconds())/1000/float64(b.N), "route-ms")
		b.ReportMetric(float64(q.Microseconds())/1000/float64(b.N), "query-ms")
		b.ReportMetric(float64(r)/float64(q), "route/query")
	})
}

// BenchmarkDiffVersions measures the diff of two 250 KB versions with a
// change in every tenth paragraph, a block added after every 50th and one
// removed in every 70: room.DiffBlocks with the summary, as the route
// answers them, with both texts' outlines parsed afresh each time (cold,
// the first diff of two versions) and already parsed (warm, the UI asking
// again); and the whole route, both versions rebuilt from their snapshots.
func BenchmarkDiffVersions(b *testing.B) {
	var ob, nb strings.Builder
	for i := 0; ob.Len() < 252_000; i++ {
		p := fmt.Sprintf("Paragraph %d of the plan says the team ships the rocket in May, once the checklist is reviewed.\n\n", i)
		h := fmt.Sprintf("## Part %d\n\n", i)
		ob.WriteString(h + p)
		nb.WriteString(h)
		switch {
		case i%10 == 0:
			nb.WriteString(strings.Replace(p, "ships the rocket in May", "launches the rocket in June", 1))
		case i%70 == 35: // removed
		default:
			nb.WriteString(p)
		}
		if i%50 == 25 {
			fmt.Fprintf(&nb, "A new paragraph %d.\n\n", i)
		}
	}
	before, after := ob.String(), nb.String()
	if len(after) < 250_000 {
		b.Fatalf("the new text is %d bytes", len(after))
	}
	check := func(blocks []room.BlockChange) {
		var changed, added, removed int
		for _, c := range blocks {
			switch c.Op {
			case room.BlockChanged:
				changed++
			case room.BlockAdded:
				added++
			case room.BlockRemoved:
				removed++
			}
		}
		if changed == 0 || added == 0 || removed == 0 {
			b.Fatalf("changed %d, added %d, removed %d", changed, added, removed)
		}
	}
	b.Run("cold", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++ // texts the outline has not parsed yet
			o, n := before+fmt.Sprintf("End %d.\n", i), after+fmt.Sprintf("End %d.\n", i)
			room.ChangeSummary(o, n)
			check(room.DiffBlocks(o, n))
		}
	})
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			room.ChangeSummary(before, after)
			check(room.DiffBlocks(before, after))
		}
	})
	b.Run("route", func(b *testing.B) {
		ta := startApp(b)
		ta.AddRepository("octo/plans")
		ch := ta.CreateDocument("octo/plans", "Diffed")
		put := func(rev int64, source string) int64 {
			r := ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": rev, "source": source})
			var plan struct{ Revision int64 }
			if r.Status != 200 || json.Unmarshal(r.Body, &plan) != nil {
				b.Fatalf("put: %d %s", r.Status, r.Body)
			}
			return plan.Revision
		}
		v1 := put(0, before)
		v2 := put(v1, after)
		path := fmt.Sprintf("/api/channels/%s/diff?from=%d&to=%d", ch.ID, v1, v2)
		for b.Loop() {
			if r := ta.Do("GET", path, nil); r.Status != 200 {
				b.Fatalf("diff: %d %s", r.Status, r.Body)
			}
		}
	})
}
