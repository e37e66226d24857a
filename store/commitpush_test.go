package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// twoPlans makes two documents with a plan at version 0.
func twoPlans(t *testing.T, s *Store) (string, string) {
	t.Helper()
	repo := mustRepo(t, s, "octo/plans")
	var ids []string
	for i := range 2 {
		ch := mustChannel(t, s, repo.NodeID, fmt.Sprintf("Plan %d", i))
		if err := s.CheckpointPlan(context.Background(), ch.ID, PlanCheckpoint{Epoch: "e1", Version: 0, Source: "# Plan\n"}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ch.ID)
	}
	return ids[0], ids[1]
}

// commitInTx is CommitPlan as it was: commitPlan in a sql.Tx.
func commitInTx(s *Store, id string, us []PlanUpdate) error {
	return s.inTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error { return s.commitPlan(ctx, tx, id, us) })
}

// TestCommitPlanWritesWhatItsTransactionWould: CommitPlan, which runs
// without a sql.Tx, leaves the rows commitPlan leaves in one.
func TestCommitPlanWritesWhatItsTransactionWould(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a, b := twoPlans(t, s)
	pushes := [][]PlanUpdate{
		{{Version: 1, ClientID: "tab", Changes: json.RawMessage(`[7,[0,"","x"]]`), Author: PlanAuthor{Kind: "person", Name: "Ada"}}},
		{{Version: 2, ClientID: "planner", Changes: json.RawMessage(`[8,[0,"","y"]]`), Author: PlanAuthor{Kind: "planner", Name: "Planner", Turn: "t1", Model: "m"}},
			{Version: 3, ClientID: "server", Changes: json.RawMessage(`[9,[0,"","z"]]`), Author: PlanAuthor{Kind: "something new"}}},
	}
	for _, us := range pushes {
		if err := s.CommitPlan(ctx, a, us); err != nil {
			t.Fatal(err)
		}
		if err := commitInTx(s, b, us); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(id string) []string {
		var out []string
		for _, q := range []string{
			`SELECT format('plan %d', version) FROM plans WHERE channel_id = ?`,
			`SELECT format('journal %d %s %s', version, client_id, changes) FROM plan_journal WHERE channel_id = ? ORDER BY version`,
			`SELECT format('history %d %s %s %s %s %s', version, kind, author, turn, model, changes) FROM plan_history WHERE channel_id = ? ORDER BY version`,
		} {
			rs, err := s.read.QueryContext(ctx, q, id)
			if err != nil {
				t.Fatal(err)
			}
			for rs.Next() {
				var r string
				if err := rs.Scan(&r); err != nil {
					t.Fatal(err)
				}
				out = append(out, r)
			}
			rs.Close()
		}
		return out
	}
	got, want := rows(a), rows(b)
	if len(got) != 1+3+4 || !slices.Equal(got, want) { // the history also holds the checkpoint, version 0
		t.Errorf("CommitPlan wrote\n%q\ncommitPlan in a transaction\n%q", got, want)
	}
}

// TestCommitPlanCostsLessThanATransaction: a push's commit is the one
// write every keystroke makes. database/sql's Tx costs it a goroutine, a
// context and a wrapper per statement (about a third of its CPU beside
// SQLite's own, docs/performance.md); CommitPlan does without.
func TestCommitPlanCostsLessThanATransaction(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a, b := twoPlans(t, s)
	va, vb := int64(0), int64(0)
	direct := testing.AllocsPerRun(100, func() {
		va++
		if err := s.CommitPlan(ctx, a, []PlanUpdate{{Version: va, ClientID: "tab", Changes: json.RawMessage(`[1]`)}}); err != nil {
			t.Fatal(err)
		}
	})
	inTx := testing.AllocsPerRun(100, func() {
		vb++
		if err := commitInTx(s, b, []PlanUpdate{{Version: vb, ClientID: "tab", Changes: json.RawMessage(`[1]`)}}); err != nil {
			t.Fatal(err)
		}
	})
	if direct > inTx*3/4 {
		t.Errorf("CommitPlan allocates %v times a push, commitPlan in a sql.Tx %v: CommitPlan should do without the Tx", direct, inTx)
	}
}
