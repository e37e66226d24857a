package room

import (
	"testing"
)

// BenchmarkOutline parses the outline of each pathological plan of about
// MaxSourceBytes (the cache left out), the plain plan of the same size
// first; x-plain is each plan's time over the plain plan's, taken in the
// same run:
//
//	go test ./room -run '^$' -bench '^BenchmarkOutline$' -benchtime 20x
func BenchmarkOutline(b *testing.B) {
	var plain float64 // ns per parse of the plain plan
	for _, p := range pathologicalPlans(MaxSourceBytes) {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(p.source)))
			b.ReportAllocs()
			for b.Loop() {
				parseBlocks(p.source)
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if p.name == "plain" {
				plain = ns
			}
			if plain > 0 {
				b.ReportMetric(ns/plain, "x-plain")
			}
		})
	}
}

// BenchmarkOutlineShared is a reader's outline of a revision already
// parsed: what GET /plan, read_plan and the rest pay after the first.
func BenchmarkOutlineShared(b *testing.B) {
	source := largePlan(MaxSourceBytes)
	Blocks(source)
	b.ReportAllocs()
	for b.Loop() {
		Blocks(source)
	}
}
