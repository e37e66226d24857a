package store

// The lists the docs call "oldest first" or "newest first" (comment
// threads, decisions, jobs) keep the order the rows were made in, by a
// sequence the store gives each row: not by a timestamp, which two rows
// can share and a clock set back can reverse, nor by a random ID. An
// upgrade numbers the rows that exist in the order they were listed
// before.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stamps are creation times that repeat and go back, as a clock set back
// or a burst within one millisecond gives them; the IDs sort against the
// order of creation.
var stamps = []int64{5000, 5000, 5000, 4000, 4000, 6000, 1000, 5000}

func orderedIDs(prefix string) []string {
	ids := make([]string, len(stamps))
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%02d", prefix, len(stamps)-i) // z-a: the reverse of creation
	}
	return ids
}

func TestListsKeepCreationOrder(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, "Order")
	want := orderedIDs("x")

	for i, id := range want {
		th := CommentThread{ID: id, Status: "open", Blocks: []CommentBlock{{Index: 0, Digest: "d"}}, AnchorState: "anchored",
			Quote: "q", CreatedBy: "ada", CreatedAt: stamps[i], UpdatedAt: stamps[i]}
		if err := s.SaveCommentThreads(ctx, ch.ID, []CommentThread{th}, nil); err != nil {
			t.Fatal(err)
		}
		// Saving a thread again (a note, a move) keeps its place.
		th.UpdatedAt = 9000
		if err := s.SaveCommentThreads(ctx, ch.ID, []CommentThread{th}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := s.CommentThreads(ctx, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := threadIDs(ts); !slices.Equal(got, want) {
		t.Errorf("comment threads %v, want the order made %v", got, want)
	}

	for i, id := range want {
		// Each call's cards in the order asked; the request IDs sort
		// against the order of the calls.
		cards := []Decision{
			{ID: id + "a", Request: "r" + id, Index: 0, Call: json.RawMessage(`{}`), Status: "open", CreatedAt: stamps[i], UpdatedAt: stamps[i]},
			{ID: id + "b", Request: "r" + id, Index: 1, Call: json.RawMessage(`{}`), Status: "open", CreatedAt: stamps[i], UpdatedAt: stamps[i]},
		}
		if err := s.SaveDecisions(ctx, ch.ID, cards, nil); err != nil {
			t.Fatal(err)
		}
		cards[0].Status, cards[0].UpdatedAt = "decided", 9000
		if err := s.SaveDecisions(ctx, ch.ID, cards[:1], nil); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := s.Decisions(ctx, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	var wantCards []string
	for _, id := range want {
		wantCards = append(wantCards, id+"a", id+"b")
	}
	if got := decisionIDs(ds); !slices.Equal(got, wantCards) {
		t.Errorf("decisions %v, want the order asked %v", got, wantCards)
	}

	for i, id := range want {
		j := Job{ID: id, Type: "t@1", Target: ch.ID, Key: id, Input: json.RawMessage(`{}`), State: "completed",
			MaxAttempts: 1, NotBefore: stamps[i], CreatedAt: stamps[i], UpdatedAt: stamps[i]}
		if _, _, err := s.EnsureJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	js, err := s.TargetJobs(ctx, ch.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	newestFirst := slices.Clone(want)
	slices.Reverse(newestFirst)
	if got := jobIDs(js); !slices.Equal(got, newestFirst) {
		t.Errorf("jobs %v, want the newest made first %v", got, newestFirst)
	}
}

// A document keeps its KeptJobs newest jobs: the newest made, whatever
// their timestamps say.
func TestJobPruningKeepsTheNewestMade(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, "Pruning")
	var made []string
	for i := range KeptJobs + 5 {
		id := fmt.Sprintf("j%03d", 999-i)
		// The clock goes back after the first five.
		at := int64(10_000 - i)
		if i < 5 {
			at = 100_000
		}
		j := Job{ID: id, Type: "t@1", Target: ch.ID, Key: id, Input: json.RawMessage(`{}`), State: "completed",
			MaxAttempts: 1, NotBefore: at, CreatedAt: at, UpdatedAt: at}
		if _, _, err := s.EnsureJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		made = append(made, id)
	}
	js, _ := s.TargetJobs(ctx, ch.ID, 100)
	want := slices.Clone(made[len(made)-KeptJobs:])
	slices.Reverse(want)
	if got := jobIDs(js); !slices.Equal(got, want) {
		t.Errorf("kept %v, want the %d newest made %v", got, KeptJobs, want)
	}
}

// An upgrade numbers the rows a database already holds in the order the
// lists gave them before: created_at, then the ID (or, for jobs, rowid).
func TestOrderMigrationKeepsExistingOrder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chopin.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRepo(t, s, "o/r")
	ch := mustChannel(t, s, r.NodeID, "Older")
	s.Close()

	ms, _ := migrations()
	at := -1
	for i, m := range ms {
		if strings.HasSuffix(m.name, "_creation_order.sql") {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("no creation_order migration")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	undoCreationOrder(t, db)
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version >= ?`, ms[at].version); err != nil {
		t.Fatal(err)
	}
	// Rows as the old schema kept them, inserted out of their old order.
	for i, st := range []int64{300, 100, 200, 100} {
		id := fmt.Sprintf("t%d", 4-i)
		if _, err := db.Exec(`INSERT INTO comment_threads (id, channel_id, status, blocks, anchor_from, anchor_to, anchor_version,
			anchor_state, quote, created_by, created_at, updated_at) VALUES (?, ?, 'open', '[]', 0, 0, 0, 'anchored', 'q', 'ada', ?, ?)`,
			id, ch.ID, st, st); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO decisions (id, channel_id, request, idx, call, status, block, created_at, updated_at)
			VALUES (?, ?, ?, 0, '{}', 'open', 0, ?, ?)`, "d"+id, ch.ID, "r"+id, st, st); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO jobs (id, type, channel_id, idempotency_key, input, state, max_attempts, not_before,
			created_at, updated_at) VALUES (?, 't@1', ?, ?, '{}', 'completed', 1, 0, ?, ?)`, "j"+id, ch.ID, "k"+id, st, st); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts, _ := s.CommentThreads(ctx, ch.ID)
	if got, want := threadIDs(ts), []string{"t1", "t3", "t2", "t4"}; !slices.Equal(got, want) {
		t.Errorf("threads after the upgrade %v, want %v", got, want)
	}
	ds, _ := s.Decisions(ctx, ch.ID)
	if got, want := decisionIDs(ds), []string{"dt1", "dt3", "dt2", "dt4"}; !slices.Equal(got, want) {
		t.Errorf("decisions after the upgrade %v, want %v", got, want)
	}
	js, _ := s.TargetJobs(ctx, ch.ID, 10)
	if got, want := jobIDs(js), []string{"jt4", "jt2", "jt1", "jt3"}; !slices.Equal(got, want) {
		t.Errorf("jobs after the upgrade %v, want %v", got, want)
	}
	// New rows come after them.
	th := CommentThread{ID: "t0", Status: "open", AnchorState: "anchored", Quote: "q", CreatedBy: "ada", CreatedAt: 1, UpdatedAt: 1}
	if err := s.SaveCommentThreads(ctx, ch.ID, []CommentThread{th}, nil); err != nil {
		t.Fatal(err)
	}
	ts, _ = s.CommentThreads(ctx, ch.ID)
	if got := threadIDs(ts); got[len(got)-1] != "t0" {
		t.Errorf("a thread made after the upgrade: %v", got)
	}
}

// undoCreationOrder takes a database back to the schema before
// 014_creation_order.sql, for a test that runs it, or a migration before
// it, again.
func undoCreationOrder(t testing.TB, db interface {
	Exec(string, ...any) (sql.Result, error)
}) {
	t.Helper()
	for _, q := range []string{
		`DROP INDEX comment_threads_order`, `ALTER TABLE comment_threads DROP COLUMN seq`,
		`CREATE INDEX comment_threads_channel ON comment_threads (channel_id, created_at)`,
		`DROP INDEX decisions_order`, `ALTER TABLE decisions DROP COLUMN seq`,
		`CREATE INDEX decisions_channel ON decisions (channel_id, created_at, idx)`,
		`DROP INDEX jobs_order`, `ALTER TABLE jobs DROP COLUMN seq`,
		`CREATE INDEX jobs_channel ON jobs (channel_id, created_at DESC)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
}

func threadIDs(ts []CommentThread) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func decisionIDs(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func jobIDs(js []Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}
