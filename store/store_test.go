package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/ident"
)

// openTest opens a fresh database file with a clock that advances one
// millisecond per reading, so that every write has its own timestamp.
func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "chopin.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clock := time.UnixMilli(1_700_000_000_000)
	s.SetClock(func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	return s
}

func mustRepo(t testing.TB, s *Store, name string) Repository {
	t.Helper()
	r, err := s.AddRepository(context.Background(), name, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustChannel(t testing.TB, s *Store, repositoryNodeID, title string) Channel {
	t.Helper()
	ch, err := s.CreateChannel(context.Background(), repositoryNodeID, title)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func errCode(err error) string {
	var se *Error
	if errors.As(err, &se) {
		return se.Code
	}
	if err != nil {
		return "unexpected: " + err.Error()
	}
	return ""
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ title, want string }{
		{"Rollout plan", "rollout-plan"},
		{"  Hello,   World!! ", "hello-world"},
		{"v2.0 — migration", "v2-0-migration"},
		{"Café crème", "café-crème"},
		{"Cafe\u0301", "café"}, // decomposed input gives the composed slug
		{"ÉTÉ", "été"},
		{"日本語の計画", "日本語の計画"},
		{"Plan 🚀 launch", "plan-launch"},
		{"!!!", "document"},
		{"a--b__c", "a-b-c"},
		{"हिन्दी योजना", "हिन्दी-योजना"}, // combining marks stay
	} {
		if got := Slug(tc.title); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.title, got, tc.want)
		}
	}
}

func TestChannelID(t *testing.T) {
	shape := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a := ChannelID("local:1", "key")
	if !shape.MatchString(a) {
		t.Fatalf("ChannelID = %q, not a lowercase v5 UUID", a)
	}
	if a != ChannelID("local:1", "key") {
		t.Error("ChannelID is not deterministic")
	}
	if a == ChannelID("local:2", "key") || a == ChannelID("local:1", "key2") {
		t.Error("ChannelID ignores part of its input")
	}
	if !ident.ValidDocumentID(a) {
		t.Errorf("ChannelID gave %q, not a document ID", a)
	}
}

func TestRepositoryNames(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	for _, bad := range []string{"", "noslash", "-owner/x", "owner-/x", "ow--ner/x", "owner/", "owner/..", "owner/a b",
		strings.Repeat("a", 40) + "/x", "o/" + strings.Repeat("a", 101), "a/b/c"} {
		if _, err := s.AddRepository(ctx, bad, ""); errCode(err) != "invalid-repository" {
			t.Errorf("AddRepository(%q): %v, want invalid-repository", bad, err)
		}
	}
	r := mustRepo(t, s, "Chopin-HQ/plans.v2")
	if !strings.HasPrefix(r.NodeID, "local:") {
		t.Errorf("node ID %q", r.NodeID)
	}
	if _, err := s.AddRepository(ctx, "chopin-hq/PLANS.V2", ""); errCode(err) != "repository-exists" {
		t.Errorf("duplicate in other case: %v", err)
	}
	got, err := s.RepositoryByName(ctx, "chopin-hq", "plans.v2")
	if err != nil || got.NodeID != r.NodeID {
		t.Errorf("RepositoryByName = %+v, %v", got, err)
	}
	again, err := s.EnsureRepository(ctx, "Chopin-HQ/plans.v2", "/tmp")
	if err != nil || again.NodeID != r.NodeID || again.Path != "/tmp" {
		t.Errorf("EnsureRepository = %+v, %v", again, err)
	}
}

// TestRepositoryPaths: a checkout path is set, changed and cleared, and
// one path belongs to one repository, however it is given.
func TestRepositoryPaths(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a := mustRepo(t, s, "ada/engine")
	mustRepo(t, s, "ada/docs")
	r, err := s.SetRepositoryPath(ctx, "ADA", "engine", "/src/engine")
	if err != nil || r.Path != "/src/engine" || r.NodeID != a.NodeID {
		t.Fatalf("SetRepositoryPath = %+v, %v", r, err)
	}
	if _, err := s.SetRepositoryPath(ctx, "ada", "docs", "/src/engine"); errCode(err) != "checkout-taken" {
		t.Errorf("the same path on a second repository: %v", err)
	}
	if _, err := s.AddRepository(ctx, "ada/third", "/src/engine"); errCode(err) != "checkout-taken" {
		t.Errorf("AddRepository with a taken path: %v", err)
	}
	if _, err := s.EnsureRepository(ctx, "ada/fourth", "/src/engine"); errCode(err) != "checkout-taken" {
		t.Errorf("EnsureRepository with a taken path: %v", err)
	}
	if r, err := s.EnsureRepository(ctx, "ada/engine", "/src/engine"); err != nil || r.Path != "/src/engine" {
		t.Errorf("EnsureRepository with its own path: %+v, %v", r, err)
	}
	if _, err := s.SetRepositoryPath(ctx, "ada", "nope", "/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown repository: %v", err)
	}
	if r, err := s.SetRepositoryPath(ctx, "ada", "engine", ""); err != nil || r.Path != "" {
		t.Fatalf("clearing: %+v, %v", r, err)
	}
	if r, err := s.SetRepositoryPath(ctx, "ada", "docs", "/src/engine"); err != nil || r.Path != "/src/engine" {
		t.Errorf("a path freed by clearing: %+v, %v", r, err)
	}
}

func TestCreateChannelTitles(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")

	a, err := s.CreateChannel(ctx, r.NodeID, "")
	if err != nil || a.Title != "Untitled plan" || a.Slug != "untitled-plan" {
		t.Fatalf("generated title: %+v %v", a, err)
	}
	b, _ := s.CreateChannel(ctx, r.NodeID, "")
	if b.Title != "Untitled plan 2" {
		t.Errorf("second generated title %q", b.Title)
	}
	c, err := s.CreateChannel(ctx, r.NodeID, "  Café  ")
	if err != nil || c.Title != "Café" || c.Slug != "café" {
		t.Fatalf("trimmed title: %+v %v", c, err)
	}
	// Same title in other case, or decomposed: taken.
	for _, dup := range []string{"café", "CAFÉ", "Cafe\u0301"} {
		if _, err := s.CreateChannel(ctx, r.NodeID, dup); errCode(err) != "title-taken" {
			t.Errorf("CreateChannel(%q): %v, want title-taken", dup, err)
		}
	}
	// Different title, same slug: numbered suffix.
	d, err := s.CreateChannel(ctx, r.NodeID, "Café!")
	if err != nil || d.Slug != "café-2" {
		t.Errorf("slug collision: %+v %v", d, err)
	}
	for _, bad := range []string{"   ", strings.Repeat("é", 121)} {
		if _, err := s.CreateChannel(ctx, r.NodeID, bad); errCode(err) != "invalid-title" {
			t.Errorf("CreateChannel(%q...): %v, want invalid-title", bad[:3], err)
		}
	}
	if _, err := s.CreateChannel(ctx, r.NodeID, strings.Repeat("é", 120)); err != nil {
		t.Errorf("120 code points refused: %v", err)
	}
	// Another repository may reuse the title and the slug.
	r2 := mustRepo(t, s, "o/other")
	if e, err := s.CreateChannel(ctx, r2.NodeID, "Café"); err != nil || e.Slug != "café" {
		t.Errorf("other repository: %+v %v", e, err)
	}
}

func TestRenameKeepsAliases(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	ch, _ := s.CreateChannel(ctx, r.NodeID, "First name")

	same, changed, err := s.RenameChannel(ctx, ch.ID, " First name ")
	if err != nil || changed || same.UpdatedAt != ch.UpdatedAt {
		t.Fatalf("same title should be a no-op: changed=%v %v", changed, err)
	}
	renamed, changed, err := s.RenameChannel(ctx, ch.ID, "Second name")
	if err != nil || !changed || renamed.Slug != "second-name" || renamed.UpdatedAt <= ch.UpdatedAt {
		t.Fatalf("rename: %+v changed=%v %v", renamed, changed, err)
	}
	for _, slug := range []string{"first-name", "second-name", "SECOND-NAME"} {
		got, err := s.ChannelBySlug(ctx, r.NodeID, slug)
		if err != nil || got.ID != ch.ID || got.Slug != "second-name" {
			t.Errorf("ChannelBySlug(%q) = %+v, %v", slug, got, err)
		}
	}
	// The old slug cannot be rebound by another document.
	other, err := s.CreateChannel(ctx, r.NodeID, "First name")
	if err != nil || other.Slug != "first-name-2" {
		t.Errorf("alias rebound: %+v %v", other, err)
	}
	// A document may take back its own former slug.
	back, _, err := s.RenameChannel(ctx, ch.ID, "First-name")
	if err != nil || back.Slug != "first-name" {
		t.Errorf("rename back: %+v %v", back, err)
	}
	if _, _, err := s.RenameChannel(ctx, ch.ID, "first NAME 2"); err != nil {
		t.Errorf("rename to a distinct title: %v", err)
	}
	if _, _, err := s.RenameChannel(ctx, other.ID, "FIRST name 2"); errCode(err) != "title-taken" {
		t.Errorf("rename onto a taken title: %v", err)
	}
}

func TestArchiveRestoreDelete(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	ch, _ := s.CreateChannel(ctx, r.NodeID, "Doc")

	if err := s.DeleteChannel(ctx, ch.ID); errCode(err) != "channel-not-archived" {
		t.Fatalf("delete active: %v", err)
	}
	a, changed, err := s.ArchiveChannel(ctx, ch.ID)
	if err != nil || !changed || !a.Archived() || a.UpdatedAt <= ch.UpdatedAt {
		t.Fatalf("archive: %+v %v %v", a, changed, err)
	}
	a2, changed, _ := s.ArchiveChannel(ctx, ch.ID)
	if changed || a2.ArchivedAt != a.ArchivedAt || a2.UpdatedAt != a.UpdatedAt {
		t.Errorf("second archive changed something: %+v", a2)
	}
	if _, _, err := s.RenameChannel(ctx, ch.ID, "New"); errCode(err) != "channel-archived" {
		t.Errorf("rename archived: %v", err)
	}
	if got, err := s.ChannelBySlug(ctx, r.NodeID, "doc"); err != nil || !got.Archived() {
		t.Errorf("archived read by slug: %+v %v", got, err)
	}
	back, changed, _ := s.RestoreChannel(ctx, ch.ID)
	if !changed || back.Archived() {
		t.Errorf("restore: %+v", back)
	}
	s.ArchiveChannel(ctx, ch.ID)
	if err := s.DeleteChannel(ctx, ch.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Channel(ctx, ch.ID); errCode(err) != "channel-not-found" {
		t.Errorf("read deleted: %v", err)
	}
	var slugs int
	s.read.QueryRow(`SELECT count(*) FROM channel_slugs WHERE channel_id = ?`, ch.ID).Scan(&slugs)
	if slugs != 0 {
		t.Errorf("%d slug rows survived the delete", slugs)
	}
}

func TestCreateChannelIdempotent(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	a, created, err := s.CreateChannelIdempotent(ctx, r.NodeID, "k1", "Brief", SourceMCP)
	if err != nil || !created || a.ID != ChannelID(r.NodeID, "k1") {
		t.Fatalf("first: %+v %v %v", a, created, err)
	}
	b, created, err := s.CreateChannelIdempotent(ctx, r.NodeID, "k1", "Brief", SourceMCP)
	if err != nil || created || b.ID != a.ID {
		t.Errorf("repeat: %+v %v %v", b, created, err)
	}
	if _, _, err := s.CreateChannelIdempotent(ctx, r.NodeID, "k1", "Other brief", SourceMCP); errCode(err) != "idempotency-conflict" {
		t.Errorf("different input: %v", err)
	}
}

func TestListChannels(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	var ids []string
	for i := range 25 {
		ch, err := s.CreateChannel(ctx, r.NodeID, fmt.Sprintf("Plan %02d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ch.ID)
	}
	s.CreateChannel(ctx, r.NodeID, "Ünïcode Straße")
	archived, _ := s.CreateChannel(ctx, r.NodeID, "Old plan")
	s.ArchiveChannel(ctx, archived.ID)

	// Paging walks every active document exactly once, newest first.
	var seen []string
	cur := ""
	for {
		page, err := s.ListChannels(ctx, r.NodeID, ListOptions{Limit: 7, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range page.Channels {
			seen = append(seen, ch.ID)
			if ch.Archived() {
				t.Errorf("archived %q listed by default", ch.Title)
			}
		}
		if page.NextCursor == "" {
			break
		}
		cur = page.NextCursor
	}
	if len(seen) != 26 || seen[1] != ids[24] || seen[25] != ids[0] {
		t.Errorf("paged %d documents, order %v", len(seen), seen)
	}

	all, _ := s.ListChannels(ctx, r.NodeID, ListOptions{IncludeArchived: true})
	if len(all.Channels) != 27 || all.Channels[0].ID != archived.ID {
		t.Errorf("includeArchived: %d documents, first %q", len(all.Channels), all.Channels[0].Title)
	}

	for query, want := range map[string]int{"plan 1": 10, "PLAN 1": 10, "straße": 1, "STRASSE": 1, "üNÏ": 1, "Old": 0, "nothing": 0} {
		page, err := s.ListChannels(ctx, r.NodeID, ListOptions{Query: query})
		if err != nil || len(page.Channels) != want {
			t.Errorf("query %q: %d results, want %d (%v)", query, len(page.Channels), want, err)
		}
	}

	first, _ := s.ListChannels(ctx, r.NodeID, ListOptions{Limit: 2, Query: "plan"})
	for _, opt := range []ListOptions{
		{Cursor: first.NextCursor, Query: "plan 1"},
		{Cursor: first.NextCursor, Query: "plan", IncludeArchived: true},
		{Cursor: "garbage!"},
		{Cursor: "e30"}, // {}
	} {
		if _, err := s.ListChannels(ctx, r.NodeID, opt); errCode(err) != "invalid-cursor" {
			t.Errorf("cursor misuse %+v: %v", opt, err)
		}
	}
	if _, err := s.ListChannels(ctx, r.NodeID, ListOptions{Cursor: first.NextCursor, Query: "PLAN"}); err != nil {
		t.Errorf("the same search in other case should accept the cursor: %v", err)
	}
	for _, limit := range []int{-1, 101} {
		if _, err := s.ListChannels(ctx, r.NodeID, ListOptions{Limit: limit}); errCode(err) != "invalid-limit" {
			t.Errorf("limit %d: %v", limit, err)
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chopin.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations VALUES (999, '999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), path)
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "schema 999") {
		t.Fatalf("Open on a newer database: %v", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chopin.db")
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.AddRepository(ctx, "o/r", "")
	ch, _ := s.CreateChannel(ctx, r.NodeID, "Kept")
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Channel(ctx, ch.ID); err != nil || got.Title != "Kept" {
		t.Errorf("after reopen: %+v %v", got, err)
	}
	var mode string
	s.read.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	var sync, fk int
	s.write.QueryRow(`PRAGMA synchronous`).Scan(&sync)
	s.write.QueryRow(`PRAGMA foreign_keys`).Scan(&fk)
	if mode != "wal" || sync != 2 || fk != 1 {
		t.Errorf("journal_mode=%s synchronous=%d foreign_keys=%d", mode, sync, fk)
	}
}

func TestCreateDocument(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	d := DocumentCreation{RepositoryNodeID: r.NodeID, Key: "k1", Title: "Plan", Plan: "# Plan\n", Brief: "Why"}
	a, created, err := s.CreateDocument(ctx, d)
	if err != nil || !created || a.ID != ChannelID(r.NodeID, "k1") || a.CreationSource != SourceMCP {
		t.Fatalf("first: %+v %v %v", a, created, err)
	}
	rec, err := s.LoadPlan(ctx, a.ID)
	if err != nil || !rec.Exists || rec.Checkpoint.Version != 0 || rec.Checkpoint.Source != "# Plan\n" {
		t.Fatalf("plan: %+v %v", rec, err)
	}
	if brief, err := s.DocumentBrief(ctx, a.ID); brief != "Why" || err != nil {
		t.Fatalf("brief: %q %v", brief, err)
	}
	if b, created, err := s.CreateDocument(ctx, d); err != nil || created || b.ID != a.ID {
		t.Errorf("repeat: %+v %v %v", b, created, err)
	}
	d.Brief = "Another reason"
	if _, _, err := s.CreateDocument(ctx, d); errCode(err) != "idempotency-conflict" {
		t.Errorf("another brief: %v", err)
	}
	d.Key = "k2"
	if _, _, err := s.CreateDocument(ctx, d); errCode(err) != "title-taken" {
		t.Errorf("same title: %v", err)
	}
	if _, err := s.Channel(ctx, ChannelID(r.NodeID, "k2")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused creation left a document: %v", err)
	}
}

func TestPlanUpdateReplays(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, "Plan")
	if _, _, found, err := s.PlanUpdateReplay(ctx, ch.ID, "k"); found || err != nil {
		t.Fatalf("before: %v %v", found, err)
	}
	for i := range keptPlanUpdates + 5 {
		if err := s.RecordPlanUpdate(ctx, ch.ID, fmt.Sprint("k", i), "h", int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if hash, rev, found, err := s.PlanUpdateReplay(ctx, ch.ID, fmt.Sprint("k", keptPlanUpdates+4)); !found || hash != "h" || rev != keptPlanUpdates+5 || err != nil {
		t.Errorf("newest: %v %q %d %v", found, hash, rev, err)
	}
	var n int
	s.read.QueryRow(`SELECT count(*) FROM mcp_plan_updates WHERE channel_id = ?`, ch.ID).Scan(&n)
	if n != keptPlanUpdates {
		t.Errorf("%d records kept, want %d", n, keptPlanUpdates)
	}
	if err := s.RecordPlanUpdate(ctx, "00000000-0000-4000-8000-000000000000", "k", "h", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown document: %v", err)
	}
}

// A write is not cut off by its caller going away: it commits whole (an
// edit whose socket closed meanwhile is kept, as the room has it).
func TestWriteOutlivesItsCaller(t *testing.T) {
	s := openTest(t)
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, "Plan")
	if err := s.CheckpointPlan(context.Background(), ch.ID, PlanCheckpoint{Epoch: "e", Source: "# Plan\n"}); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.CommitPlan(gone, ch.ID, []PlanUpdate{{Version: 1, ClientID: "t", Changes: []byte(`[7,[0,"a"]]`)}}); err != nil {
		t.Fatalf("a write whose caller went away: %v", err)
	}
	p, err := s.LoadPlan(context.Background(), ch.ID)
	if err != nil || len(p.Journal) != 1 || p.Journal[0].Version != 1 {
		t.Fatalf("the plan after it: %+v, %v", p.Journal, err)
	}
}
