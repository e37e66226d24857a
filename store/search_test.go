package store

// Tests of the search index (013_search.sql): the listing's query answers
// exactly as reading the catalog does, through every kind of catalog write,
// and Search finds titles, descriptions and plan text with their line.

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// wantListing is the listing's query by its definition: every document of
// the repository whose folded title or description holds the folded query,
// most recently updated first.
func wantListing(t *testing.T, s *Store, repositoryNodeID, query string, includeArchived bool) []string {
	t.Helper()
	rows, err := s.read.Query(`SELECT id, title, coalesce(description, ''), coalesce(archived_at, 0) FROM channels
		WHERE repository_node_id = ? ORDER BY updated_at DESC, id DESC`, repositoryNodeID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	q := foldKey(strings.TrimSpace(query))
	for rows.Next() {
		var id, title, desc string
		var archivedAt int64
		if err := rows.Scan(&id, &title, &desc, &archivedAt); err != nil {
			t.Fatal(err)
		}
		if (includeArchived || archivedAt == 0) && strings.Contains(foldKey(title)+"\n"+foldKey(desc), q) {
			ids = append(ids, id)
		}
	}
	return ids
}

func listAll(t *testing.T, s *Store, repositoryNodeID, query string, includeArchived bool) []string {
	t.Helper()
	var ids []string
	cur := ""
	for {
		page, err := s.ListChannels(context.Background(), repositoryNodeID, ListOptions{Query: query, Cursor: cur, Limit: 3, IncludeArchived: includeArchived})
		if err != nil {
			t.Fatalf("query %q: %v", query, err)
		}
		for _, c := range page.Channels {
			ids = append(ids, c.ID)
		}
		if page.NextCursor == "" {
			return ids
		}
		cur = page.NextCursor
	}
}

// checkListings compares every query's listing, from the index and from
// the catalog in recency order, with the definition.
func checkListings(t *testing.T, step string, s *Store, repositoryNodeID string) {
	t.Helper()
	defer func(n int) { indexedCandidates = n }(indexedCandidates)
	for _, query := range []string{"pla", "plan 0", "PLAN 01", "Straße", "strasse", "ünï", "renamed", "wal journal", "journal\nx", "zzz", "n 1", "e"} {
		for _, archived := range []bool{false, true} {
			want := wantListing(t, s, repositoryNodeID, query, archived)
			for _, candidates := range []int{1000, 0} { // 0: never the index
				indexedCandidates = candidates
				if got := listAll(t, s, repositoryNodeID, query, archived); !slices.Equal(got, want) {
					t.Errorf("%s: query %q (archived %v, candidates %d): got %d documents %v, want %d %v",
						step, query, archived, candidates, len(got), got, len(want), want)
				}
			}
		}
	}
	var rows, docs int
	s.read.QueryRow(`SELECT count(*) FROM channel_catalog_search`).Scan(&rows)
	s.read.QueryRow(`SELECT count(*) FROM channels`).Scan(&docs)
	if rows != docs {
		t.Errorf("%s: %d index rows for %d documents", step, rows, docs)
	}
}

func TestSearchIndexFollowsCatalog(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	other := mustRepo(t, s, "o/other")
	var ids []string
	for i := range 12 {
		ids = append(ids, mustChannel(t, s, r.NodeID, fmt.Sprintf("Plan %02d", i)).ID)
	}
	mustChannel(t, s, r.NodeID, "Ünïcode Straße")
	mustChannel(t, s, other.NodeID, "Plan 01 elsewhere")
	checkListings(t, "created", s, r.NodeID)

	if _, _, err := s.RenameChannel(ctx, ids[3], "Renamed plan"); err != nil {
		t.Fatal(err)
	}
	checkListings(t, "renamed", s, r.NodeID)

	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return projectDescription(ctx, tx, Description{Target: ids[5], Text: "Moving to SQLite with a WAL journal",
			SourceRevision: 1, SourceHash: "h", Generator: "g", JobID: "j1", ProjectedAt: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	checkListings(t, "described", s, r.NodeID)

	for _, id := range ids[6:9] {
		if _, _, err := s.ArchiveChannel(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.RestoreChannel(ctx, ids[7]); err != nil {
		t.Fatal(err)
	}
	checkListings(t, "archived", s, r.NodeID)

	if err := s.DeleteChannel(ctx, ids[6]); err != nil {
		t.Fatal(err)
	}
	checkListings(t, "deleted", s, r.NodeID)

	// A rolled-back write leaves the index as it was.
	if _, err := s.CreateChannel(ctx, r.NodeID, "plan 00"); errCode(err) != "title-taken" {
		t.Fatalf("duplicate title: %v", err)
	}
	checkListings(t, "refused", s, r.NodeID)
}

// TestSearchMigrationFillsIndex removes the index and the record of its
// migration from a database with documents and plans, reopens it, and
// finds them all again.
func TestSearchMigrationFillsIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chopin.db")
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRepo(t, s, "o/r")
	c := mustChannel(t, s, r.NodeID, "Storage plan")
	if err := s.CheckpointPlan(ctx, c.ID, PlanCheckpoint{Epoch: "e", Version: 1, Source: "# Storage\n\nUse a write-ahead log."}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`DROP TABLE channel_catalog_search`, `DROP TABLE channel_plan_search`, `DROP TABLE channel_search_rows`,
		`DROP TABLE channel_plan_lines`, `DROP TRIGGER channel_search_insert`, `DROP TRIGGER channel_search_catalog`,
		`DELETE FROM schema_migrations WHERE version >= (SELECT version FROM schema_migrations WHERE name LIKE '%\_search.sql' ESCAPE '\')`,
	} {
		if _, err := s.write.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	undoCreationOrder(t, s.write) // a later migration, run again too
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Search(ctx, SearchOptions{Query: "write-ahead"})
	if err != nil || len(got) != 1 || got[0].Match != (SearchMatch{Field: FieldPlan, Line: 3, Text: "Use a write-ahead log."}) {
		t.Fatalf("after the migration: %+v, %v", got, err)
	}
	page, err := s.ListChannels(ctx, r.NodeID, ListOptions{Query: "storage"})
	if err != nil || len(page.Channels) != 1 {
		t.Fatalf("listing after the migration: %+v, %v", page, err)
	}
}

func TestSearch(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	other := mustRepo(t, s, "o/other")
	a := mustChannel(t, s, r.NodeID, "Storage plan")
	b := mustChannel(t, s, r.NodeID, "Network plan")
	c := mustChannel(t, s, other.NodeID, "Cache plan")
	old := mustChannel(t, s, r.NodeID, "Old storage notes")
	long := mustChannel(t, s, r.NodeID, "Long lines")
	checkpoint := func(id, text string) {
		t.Helper()
		if err := s.CheckpointPlan(ctx, id, PlanCheckpoint{Epoch: "e", Version: 1, Source: text}); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint(a.ID, "# Storage\n\n  Keep the WAL journal small.  \n")
	checkpoint(b.ID, "# Network\n\nA journal of every packet.")
	checkpoint(c.ID, "Journal lines in the cache.")
	checkpoint(old.ID, "journal")
	checkpoint(long.ID, strings.Repeat("x", 300)+" the needle "+strings.Repeat("y", 300))
	if _, _, err := s.ArchiveChannel(ctx, old.ID); err != nil {
		t.Fatal(err)
	}

	search := func(opt SearchOptions) []SearchResult {
		t.Helper()
		got, err := s.Search(ctx, opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		return got
	}
	got := search(SearchOptions{Query: "JOURNAL"})
	var titles []string
	for _, res := range got {
		titles = append(titles, res.Channel.Title)
	}
	// Active documents first, most recently updated first; archived last.
	if want := []string{"Cache plan", "Network plan", "Storage plan", "Old storage notes"}; !slices.Equal(titles, want) {
		t.Errorf("journal: %v, want %v", titles, want)
	}
	if got[2].Match != (SearchMatch{Field: FieldPlan, Line: 3, Text: "Keep the WAL journal small."}) || got[2].Channel.Repository != "o/r" {
		t.Errorf("storage match: %+v", got[2])
	}

	got = search(SearchOptions{Query: "journal", RepositoryNodeID: other.NodeID})
	if len(got) != 1 || got[0].Channel.ID != c.ID || got[0].Match.Line != 1 {
		t.Errorf("one repository: %+v", got)
	}
	got = search(SearchOptions{Query: "storage"})
	if len(got) != 2 || got[0].Match != (SearchMatch{Field: FieldTitle, Line: 1, Text: "Storage plan"}) {
		t.Errorf("title: %+v", got)
	}
	got = search(SearchOptions{Query: "journal", Limit: 2})
	if len(got) != 2 {
		t.Errorf("limit 2: %d results", len(got))
	}

	// A later checkpoint replaces the indexed text.
	checkpoint(a.ID, "# Storage\n\nNo logs at all.")
	got = search(SearchOptions{Query: "wal journal"})
	if len(got) != 0 {
		t.Errorf("after a new checkpoint the old text is still found: %+v", got)
	}
	if got = search(SearchOptions{Query: "no logs"}); len(got) != 1 || got[0].Channel.ID != a.ID {
		t.Errorf("new checkpoint text: %+v", got)
	}

	// A long line is cut to 200 characters around the match.
	got = search(SearchOptions{Query: "needle"})
	if len(got) != 1 {
		t.Fatalf("needle: %+v", got)
	}
	text := []rune(got[0].Match.Text)
	if len(text) != MaxMatchText || !strings.Contains(string(text), "the needle") || text[0] != '…' || text[len(text)-1] != '…' {
		t.Errorf("long line: %d characters %q", len(text), string(text))
	}

	// Two characters: titles and descriptions only.
	if got = search(SearchOptions{Query: "ca"}); len(got) != 1 || got[0].Channel.ID != c.ID {
		t.Errorf("short query: %+v", got)
	}
	for _, bad := range []struct {
		opt  SearchOptions
		code string
	}{
		{SearchOptions{Query: "  "}, "invalid-query"},
		{SearchOptions{Query: strings.Repeat("é", 201)}, "invalid-query"},
		{SearchOptions{Query: "plan", Limit: 51}, "invalid-limit"},
		{SearchOptions{Query: "plan", Limit: -1}, "invalid-limit"},
	} {
		if _, err := s.Search(ctx, bad.opt); errCode(err) != bad.code {
			t.Errorf("%+v: %v, want %s", bad.opt, err, bad.code)
		}
	}
	// FTS5 syntax in a query is text.
	if got = search(SearchOptions{Query: `"plan" OR NOT *`}); len(got) != 0 {
		t.Errorf("query syntax: %+v", got)
	}
	if _, err := s.Search(ctx, SearchOptions{Query: strings.Repeat("é", 200)}); err != nil {
		t.Errorf("200 characters: %v", err)
	}
}

// TestCatalogIndexMerged checks that catalog writes, each leaving a segment
// of its own in the index, are merged back into one soon after.
func TestCatalogIndexMerged(t *testing.T) {
	s := openTest(t)
	r := mustRepo(t, s, "o/r")
	segments := func() int {
		var n int
		if err := s.read.QueryRow(`SELECT count(DISTINCT segid) FROM channel_catalog_search_idx`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	time.Sleep(3 * catalogTidyDelay) // past the merge after start
	for i := range 8 {
		mustChannel(t, s, r.NodeID, fmt.Sprintf("Plan %d", i))
	}
	if n := segments(); n < 2 {
		t.Fatalf("%d segments right after the writes; the test needs several", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for segments() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d segments long after the last write", segments())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPlanLinesFollowCheckpoints checks the plan's index after checkpoints
// that add, repeat and remove lines, and after the document is deleted.
func TestPlanLinesFollowCheckpoints(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	c := mustChannel(t, s, r.NodeID, "Lines")
	check := func(step, text string) {
		t.Helper()
		rows, err := s.read.Query(`SELECT line FROM channel_plan_lines WHERE channel_id = ? ORDER BY line`, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var line string
			rows.Scan(&line)
			got = append(got, line)
		}
		rows.Close()
		var want []string
		for line := range planLines(text) {
			want = append(want, line)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: indexed %q, want %q", step, got, want)
		}
		for _, table := range []string{"channel_plan_search", "channel_catalog_search"} {
			if _, err := s.write.Exec(`INSERT INTO ` + table + ` (` + table + `) VALUES ('integrity-check')`); err != nil {
				t.Errorf("%s: %s: %v", step, table, err)
			}
		}
	}
	for i, text := range []string{
		"# Lines\n\nalpha\nbeta\nalpha\n   \n",
		"# Lines\n\nalpha\ngamma\n",
		"",
		"# Lines\n\tindented\n",
	} {
		if err := s.CheckpointPlan(ctx, c.ID, PlanCheckpoint{Epoch: "e", Version: int64(i + 1), Source: text}); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprint("checkpoint ", i+1), text)
	}
	if got, _ := s.Search(ctx, SearchOptions{Query: "INDENTED"}); len(got) != 1 || got[0].Match.Line != 2 || got[0].Match.Text != "indented" {
		t.Errorf("indented: %+v", got)
	}
	if got, _ := s.Search(ctx, SearchOptions{Query: "gamma"}); len(got) != 0 {
		t.Errorf("a removed line is still found: %+v", got)
	}
	s.ArchiveChannel(ctx, c.ID)
	if err := s.DeleteChannel(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	check("deleted", "")
}
