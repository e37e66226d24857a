package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// SeedChannels creates n documents titled "<prefix> N" in one transaction;
// benchmarks and the start-up measurement use it to build large catalogs
// quickly.
func seedChannels(tb testing.TB, s *Store, repositoryNodeID, prefix string, n int) {
	tb.Helper()
	err := s.inTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
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

// BenchmarkListChannelsDescriptions measures the listing query on 10,000
// documents that all have a generated description (searched as part of the
// folded search text) against the same query on 10,000 documents without
// one, the catalog before descriptions existed, in the same database and
// run.
func BenchmarkListChannelsDescriptions(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	before := mustRepo(b, s, "o/before")
	after := mustRepo(b, s, "o/after")
	seedChannels(b, s, before.NodeID, "Implementation plan", 10_000)
	seedChannels(b, s, after.NodeID, "Implementation plan", 10_000)
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, title FROM channels WHERE repository_node_id = ?`, after.NodeID)
		if err != nil {
			return err
		}
		var ids, titles []string
		for rows.Next() {
			var id, title string
			if err := rows.Scan(&id, &title); err != nil {
				return err
			}
			ids, titles = append(ids, id), append(titles, title)
		}
		rows.Close()
		for i, id := range ids {
			n := strings.TrimPrefix(titles[i], "Implementation plan ")
			if err := projectDescription(ctx, tx, Description{Target: id, Text: "Plan for moving service " + n + " from Postgres to SQLite with a WAL journal",
				SourceRevision: 1, SourceHash: "h", Generator: "document-summary@1", JobID: "job-" + id, ProjectedAt: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		repo string
		opt  ListOptions
	}{
		{"before/title-query", before.NodeID, ListOptions{Query: "PLAN 0999"}},
		{"after/title-query", after.NodeID, ListOptions{Query: "PLAN 0999"}},
		{"after/description-query", after.NodeID, ListOptions{Query: "SERVICE 0999"}},
		{"before/first-page", before.NodeID, ListOptions{}},
		{"after/first-page", after.NodeID, ListOptions{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				page, err := s.ListChannels(ctx, bc.repo, bc.opt)
				if err != nil || len(page.Channels) == 0 {
					b.Fatal(len(page.Channels), err)
				}
			}
		})
	}
}

// BenchmarkListChannelsSearch measures the listing's query that matches 10
// documents, at 10,000 and at 100,000 documents in the repository: through
// ListChannels (the search index proposes the candidates) side by side, in
// the same database and run, with the bare SQL of the catalog scan that
// answered it before the index (instr over channels_recency), run directly.
func BenchmarkListChannelsSearch(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10_000, 100_000} {
		s := openTest(b)
		r := mustRepo(b, s, "o/r")
		seedChannels(b, s, r.NodeID, "Implementation plan", n)
		// The index as start-up or the merge after a catalog write leaves it.
		if err := optimizeCatalogIndex(ctx, s.write); err != nil {
			b.Fatal(err)
		}
		query := foldKey("PLAN 0999") // plan 09990 to plan 09999
		name := fmt.Sprintf("%dk", n/1000)
		b.Run(name+"/listing", func(b *testing.B) {
			for b.Loop() {
				page, err := s.ListChannels(ctx, r.NodeID, ListOptions{Query: "PLAN 0999"})
				if err != nil || len(page.Channels) != 10 {
					b.Fatal(len(page.Channels), err)
				}
			}
		})
		b.Run(name+"/bare-sql-scan", func(b *testing.B) {
			for b.Loop() {
				rows, err := s.read.QueryContext(ctx, `SELECT id FROM channels
					WHERE repository_node_id = ? AND archived_at IS NULL AND instr(search_text, ?) > 0
					  AND (updated_at, id) < (?, ?)
					ORDER BY updated_at DESC, id DESC LIMIT ?`, r.NodeID, query, int64(1<<63-1), "~", DefaultListLimit+1)
				expectRows(b, rows, err, 10)
			}
		})
		s.Close()
	}
}

// BenchmarkSearchPlanText measures GET /api/search's store call for a word
// in the plans of 10 of 10,000 documents, each plan about 2 KB, side by side
// with the bare SQL that would answer it without the index: instr over
// every plan's lower-cased text, in the same database and run.
func BenchmarkSearchPlanText(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	r := mustRepo(b, s, "o/r")
	seedChannels(b, s, r.NodeID, "Implementation plan", 10_000)
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM channels ORDER BY id`)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
		for i, id := range ids {
			var plan strings.Builder
			fmt.Fprintf(&plan, "# Plan %d\n\n", i)
			for j := range 30 {
				fmt.Fprintf(&plan, "- Step %d: move service %d from Postgres to SQLite with a WAL journal.\n", j, i*30+j)
			}
			if i%1000 == 7 {
				plan.WriteString("- Ask the Zanzibar team first.\n")
			}
			if err := indexPlanLines(ctx, tx, id, plan.String()); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO plans (channel_id, epoch, version, checkpoint_version, updated_at)
				VALUES (?, 'e', 0, 0, 0)`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO plan_texts (channel_id, source) VALUES (?, ?)`, id, plan.String()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, table := range []string{"channel_catalog_search", "channel_plan_search"} {
		if _, err := s.write.Exec(`INSERT INTO ` + table + ` (` + table + `) VALUES ('optimize')`); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			got, err := s.Search(ctx, SearchOptions{Query: "zanzibar"})
			if err != nil || len(got) != 10 {
				b.Fatal(len(got), err)
			}
		}
	})
	b.Run("bare-sql-scan", func(b *testing.B) {
		for b.Loop() {
			rows, err := s.read.QueryContext(ctx, `SELECT c.id FROM plan_texts p JOIN channels c ON c.id = p.channel_id
				WHERE instr(lower(p.source), ?) > 0
				ORDER BY c.archived_at IS NOT NULL, c.updated_at DESC, c.id DESC LIMIT 20`, "zanzibar")
			expectRows(b, rows, err, 10)
		}
	})
}

// BenchmarkCheckpointIndexed measures a plan checkpoint of a 10 KB and a
// 250 KB plan in which one line changed since the last one: CheckpointPlan,
// which now brings the plan's search index up to date too, side by side
// with the checkpoint's bare SQL as it was before the index (the upsert of
// the text and the journal's trim, in one transaction), in the same run.
func BenchmarkCheckpointIndexed(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{10_000, 250_000} {
		s := openTest(b)
		r := mustRepo(b, s, "o/r")
		indexed := mustChannel(b, s, r.NodeID, "Indexed")
		bare := mustChannel(b, s, r.NodeID, "Bare")
		var text strings.Builder
		for i := 0; text.Len() < size; i++ {
			fmt.Fprintf(&text, "- Step %d: move the service from Postgres to SQLite with a WAL journal.\n", i)
		}
		// One line changes, as between two checkpoints.
		source := func(v int64) string { return text.String() + fmt.Sprintf("- Edit %d\n", v) }
		// Both plans exist and are indexed before the first measured checkpoint.
		for _, id := range []string{indexed.ID, bare.ID} {
			if err := s.CheckpointPlan(ctx, id, PlanCheckpoint{Epoch: "e", Version: 0, Source: source(0)}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("%dKB/checkpoint", size/1000), func(b *testing.B) {
			v := int64(0)
			for b.Loop() {
				v++
				if err := s.CheckpointPlan(ctx, indexed.ID, PlanCheckpoint{Epoch: "e", Version: v, Source: source(v), KeepAfter: v}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dKB/bare-sql", size/1000), func(b *testing.B) {
			v := int64(0)
			for b.Loop() {
				v++
				err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
					if _, err := tx.ExecContext(ctx, `INSERT INTO plans (channel_id, epoch, version, checkpoint_version, updated_at)
						VALUES (?, 'e', ?, ?, ?)
						ON CONFLICT (channel_id) DO UPDATE SET epoch = excluded.epoch,
							version = max(plans.version, excluded.version),
							checkpoint_version = excluded.checkpoint_version, updated_at = excluded.updated_at`,
						bare.ID, v, v, s.nowMS()); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO plan_texts (channel_id, source) VALUES (?, ?)
						ON CONFLICT (channel_id) DO UPDATE SET source = excluded.source`, bare.ID, source(v)); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `DELETE FROM plan_journal WHERE channel_id = ? AND version <= ?`, bare.ID, v)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}

// expectRows reads a benchmark query's rows and fails unless there are
// want of them: a search that finds the wrong count measures nothing.
func expectRows(b *testing.B, rows *sql.Rows, err error, want int) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n != want {
		b.Fatalf("%d rows (%v), want %d", n, err, want)
	}
}
