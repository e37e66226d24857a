package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/store"
)

// BenchmarkHistoryYear measures the database growth of a plan's history: a
// long plan (about 50 KB) edited for a simulated year, 300 changes a day
// (typing, deletions, lines pasted over others), committed as the room commits them
// (store.CommitPlan, a checkpoint every 200), pruned at the end of each day
// with the default policy (30 days of detail, at most 10,000 changes, then
// one version a day, at most 365). Reports the history's bytes per change
// made, in the detail window and over the year, and its size at the end.
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
		var detailBytes int64
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
		b.ReportMetric(float64(detailBytes)/float64(30*perDay), "detail-B/change")
		b.ReportMetric(float64(total)/float64(days*perDay), "year-B/change")
		b.ReportMetric(float64(total)/1024, "history-KB")
		b.ReportMetric(float64(len(vs)), "versions-kept")
		b.ReportMetric(float64(len(text))/1024, "plan-KB")
		ta.Stop()
	}
}
