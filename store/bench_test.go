package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// SeedChannels creates n documents titled "<prefix> N" in one transaction;
// benchmarks and the start-up measurement use it to build large catalogs
// quickly.
func seedChannels(tb testing.TB, s *Store, repositoryNodeID, prefix string, n int) {
	tb.Helper()
	err := s.inTx(context.Background(), func(tx *sql.Tx) error {
		for i := range n {
			_, err := createChannel(context.Background(), tx, s.nowMS(), newChannel{
				repositoryNodeID: repositoryNodeID,
				id:               ChannelID(repositoryNodeID, uuid.NewString()),
				title:            fmt.Sprintf("%s %05d", prefix, i),
				source:           SourceBrowser,
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkListChannels measures listing a repository of 10,000 documents:
// the first page, a cursor page deep in the list, and a query.
func BenchmarkListChannels(b *testing.B) {
	s := openTest(b)
	r := mustRepo(b, s, "o/r")
	seedChannels(b, s, r.NodeID, "Implementation plan", 10_000)
	ctx := context.Background()

	// A cursor 9,000 documents deep.
	deep := ""
	for range 90 {
		page, err := s.ListChannels(ctx, r.NodeID, ListOptions{Limit: 100, Cursor: deep})
		if err != nil {
			b.Fatal(err)
		}
		deep = page.NextCursor
	}

	for _, bc := range []struct {
		name string
		opt  ListOptions
	}{
		{"first-page", ListOptions{}},
		{"deep-cursor", ListOptions{Cursor: deep, Limit: 100}},
		{"query", ListOptions{Query: "PLAN 0999"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				page, err := s.ListChannels(ctx, r.NodeID, bc.opt)
				if err != nil || len(page.Channels) == 0 {
					b.Fatal(len(page.Channels), err)
				}
			}
		})
	}
}
