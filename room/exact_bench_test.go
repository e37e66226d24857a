package room

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchPlan is a plan of about size bytes in paragraphs, headings, lists
// and code, every paragraph its own; seed makes another plan of the same
// shape with other words.
func benchPlan(size int, seed string) string {
	var b strings.Builder
	for k := 0; b.Len() < size; k++ {
		switch k % 5 {
		case 0:
			fmt.Fprintf(&b, "## %s part %d\n\n", seed, k)
		case 1:
			fmt.Fprintf(&b, "- %s item %d: the crew trains\n- %s item %d: the pad is ready\n\n", seed, k, seed, k)
		case 2:
			fmt.Fprintf(&b, "```\n%s code %d\n```\n\n", seed, k)
		default:
			fmt.Fprintf(&b, "Paragraph %d of the %s plan says the team ships the rocket in May, once the checklist is reviewed, with café and 😀.\n\n", k, seed)
		}
	}
	return b.String()
}

// BenchmarkDiffChangeSet measures the change set of a whole new 250 KB
// plan (an HTTP PUT, MCP's update_document) beside the single replacement
// between common prefix and suffix that the server wrote before
// (oneSpanChangeSet), in the same run: one paragraph changed, a word
// changed in every paragraph, and every line changed.
func BenchmarkDiffChangeSet(b *testing.B) {
	before := benchPlan(250_000, "launch")
	mid := strings.Index(before[len(before)/2:], "ships the rocket") + len(before)/2
	cases := []struct {
		name  string
		after string
	}{
		{"one-paragraph", before[:mid] + "launches the rocket" + before[mid+len("ships the rocket"):]},
		{"every-paragraph", strings.ReplaceAll(before, "ships the rocket", "launches the rocket")},
		{"everything", benchPlan(250_000, "landing")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var old, now time.Duration
			for b.Loop() {
				t0 := time.Now()
				oneSpanChangeSet(before, c.after)
				t1 := time.Now()
				DiffChangeSet(before, c.after)
				old, now = old+t1.Sub(t0), now+time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(old.Microseconds())/n, "one-span-µs")
			b.ReportMetric(float64(now.Microseconds())/n, "diff-µs")
			b.ReportMetric(float64(now)/float64(old), "diff/one-span")
		})
	}
}
