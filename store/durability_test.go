package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// The plan journal, Chat, Decisions and browser sessions on a real SQLite
// file: what is stored is what comes back, and a write that does not fit
// what is stored is refused whole.

// planAt creates a document whose plan is checkpointed at version 0.
func planAt(t *testing.T, s *Store) string {
	t.Helper()
	repo := mustRepo(t, s, "octo/plans")
	ch := mustChannel(t, s, repo.NodeID, "Plan")
	if err := s.CheckpointPlan(context.Background(), ch.ID, PlanCheckpoint{Epoch: "e1", Version: 0, Source: "# Plan\n"}); err != nil {
		t.Fatal(err)
	}
	return ch.ID
}

func updates(from, to int64) []PlanUpdate {
	var us []PlanUpdate
	for v := from; v <= to; v++ {
		us = append(us, PlanUpdate{Version: v, ClientID: "tab", Changes: json.RawMessage(fmt.Sprintf(`[%d]`, v))})
	}
	return us
}

func journalVersions(t *testing.T, s *Store, id string) (int64, []int64) {
	t.Helper()
	rec, err := s.LoadPlan(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var vs []int64
	for _, u := range rec.Journal {
		vs = append(vs, u.Version)
	}
	var version int64
	if err := s.read.QueryRow(`SELECT version FROM plans WHERE channel_id = ?`, id).Scan(&version); err != nil {
		t.Fatal(err)
	}
	return version, vs
}

func TestCommitPlanIsFenced(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	id := planAt(t, s)
	if err := s.CommitPlan(ctx, id, updates(1, 3)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		us   []PlanUpdate
		code string
	}{
		{"a version already stored", updates(3, 4), "plan-version-conflict"},
		{"a version after a gap", updates(5, 6), "plan-version-conflict"},
		{"a gap inside the batch", []PlanUpdate{updates(4, 4)[0], updates(6, 6)[0]}, ""},
		{"a batch out of order", []PlanUpdate{updates(5, 5)[0], updates(4, 4)[0]}, ""},
		{"the version before the stored one", updates(2, 2), "plan-version-conflict"},
	} {
		err := s.CommitPlan(ctx, id, tc.us)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		} else if tc.code != "" && errCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
		if v, vs := journalVersions(t, s, id); v != 3 || !slices.Equal(vs, []int64{1, 2, 3}) {
			t.Errorf("%s: stored version %d, journal %v; want 3, [1 2 3]", tc.name, v, vs)
		}
	}
	if err := s.CommitPlan(ctx, id, updates(4, 5)); err != nil {
		t.Fatalf("the next versions: %v", err)
	}
	rec, _ := s.LoadPlan(ctx, id)
	if len(rec.Journal) != 5 || string(rec.Journal[4].Changes) != "[5]" || rec.Journal[4].ClientID != "tab" {
		t.Errorf("journal %+v", rec.Journal)
	}
}

func TestCheckpointKeepsTheJournalAfterKeepAfter(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	id := planAt(t, s)
	if err := s.CommitPlan(ctx, id, updates(1, 10)); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointPlan(ctx, id, PlanCheckpoint{Epoch: "e1", Version: 10, Source: "ten", KeepAfter: 6}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.LoadPlan(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Exists || rec.Checkpoint != (PlanCheckpoint{Epoch: "e1", Version: 10, Source: "ten"}) {
		t.Errorf("checkpoint %+v", rec.Checkpoint)
	}
	if v, vs := journalVersions(t, s, id); v != 10 || !slices.Equal(vs, []int64{7, 8, 9, 10}) {
		t.Errorf("after a checkpoint keeping after 6: version %d, journal %v", v, vs)
	}
	// The version never goes back, and a checkpoint past the journal drops
	// no more than it holds.
	if err := s.CommitPlan(ctx, id, updates(11, 12)); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointPlan(ctx, id, PlanCheckpoint{Epoch: "e1", Version: 11, Source: "eleven", KeepAfter: 11}); err != nil {
		t.Fatal(err)
	}
	if v, vs := journalVersions(t, s, id); v != 12 || !slices.Equal(vs, []int64{12}) {
		t.Errorf("version %d, journal %v; want 12, [12]", v, vs)
	}
	if err := s.CommitPlan(ctx, id, updates(13, 13)); err != nil {
		t.Errorf("commit after a checkpoint behind the version: %v", err)
	}
	// A document without a plan has none; an unknown document cannot get one.
	if rec, err := s.LoadPlan(ctx, "0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f"); err != nil || rec.Exists {
		t.Errorf("unknown plan: %+v %v", rec, err)
	}
	if err := s.CheckpointPlan(ctx, "0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f", PlanCheckpoint{Epoch: "e"}); errCode(err) != "channel-not-found" {
		t.Errorf("checkpoint of an unknown document: %v", err)
	}
}

func TestMessagesAndDecisionsRoundTrip(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	id := planAt(t, s)
	for i := 1; i <= 5; i++ {
		m := Message{ID: fmt.Sprintf("m%d", i), ChannelID: id, Seq: int64(i), Role: "person", Author: "ada",
			Text: fmt.Sprintf("text %d", i), CreatedAt: int64(i), UpdatedAt: int64(i)}
		if i == 2 {
			m.Details = json.RawMessage(`{"a":1}`)
		}
		if err := s.SaveMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// Saving by ID replaces the text, status and details only.
	if err := s.SaveMessage(ctx, Message{ID: "m3", ChannelID: id, Seq: 99, Role: "planner", Text: "edited", Status: "failed", CreatedAt: 99, UpdatedAt: 100}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Messages(ctx, id, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s %d %s %s %s %d/%d %s", m.ID, m.Seq, m.Role, m.Text, m.Status, m.CreatedAt, m.UpdatedAt, m.Details))
	}
	want := []string{"m3 3 person edited failed 3/100 ", "m4 4 person text 4  4/4 ", "m5 5 person text 5  5/5 "}
	if !slices.Equal(got, want) {
		t.Errorf("newest 3 messages\n got %q\nwant %q", got, want)
	}
	if ms, _ := s.Messages(ctx, id, 10); len(ms) != 5 || string(ms[1].Details) != `{"a":1}` || ms[0].ID != "m1" {
		t.Errorf("all messages %+v", ms)
	}
	if err := s.SaveMessage(ctx, Message{ID: "x", ChannelID: "0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f", Role: "person"}); errCode(err) != "channel-not-found" {
		t.Errorf("message to an unknown document: %v", err)
	}

	// Decisions are saved with the plan update that places them, or not at all.
	card := func(id, status string, answer string) Decision {
		d := Decision{ID: id, Request: "r1", Call: json.RawMessage(`{"method":"confirm"}`), Status: status, Block: -1, CreatedAt: 7, UpdatedAt: 8}
		if answer != "" {
			d.Answer, d.AnsweredBy = json.RawMessage(answer), "ada"
		}
		return d
	}
	if err := s.SaveDecisions(ctx, id, []Decision{card("d1", "open", "")}, updates(2, 2)); errCode(err) != "plan-version-conflict" {
		t.Fatalf("decisions with a misplaced update: %v", err)
	}
	if ds, _ := s.Decisions(ctx, id); len(ds) != 0 {
		t.Fatalf("a refused placement kept its cards: %+v", ds)
	}
	if err := s.SaveDecisions(ctx, id, []Decision{card("d1", "open", "")}, updates(1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveDecisions(ctx, id, []Decision{card("d1", "decided", `{"yes":true}`)}, nil); err != nil {
		t.Fatal(err)
	}
	ds, err := s.Decisions(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Status != "decided" || string(ds[0].Answer) != `{"yes":true}` || ds[0].AnsweredBy != "ada" ||
		ds[0].ChannelID != id || ds[0].Block != -1 || string(ds[0].Call) != `{"method":"confirm"}` || ds[0].CreatedAt != 7 {
		t.Errorf("decisions %+v", ds)
	}
	if v, vs := journalVersions(t, s, id); v != 1 || !slices.Equal(vs, []int64{1}) {
		t.Errorf("placement: version %d, journal %v", v, vs)
	}
}

func TestBrowserSessions(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	if ok, err := s.BrowserSession(ctx, "never-issued"); ok || err != nil {
		t.Errorf("an unknown session: %v %v", ok, err)
	}
	if err := s.AddBrowserSession(ctx, "cookie-value"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.BrowserSession(ctx, "cookie-value"); !ok || err != nil {
		t.Errorf("the session: %v %v", ok, err)
	}
	for _, other := range []string{"", "cookie-valu", "cookie-value2", "COOKIE-VALUE"} {
		if ok, _ := s.BrowserSession(ctx, other); ok {
			t.Errorf("%q accepted as a session", other)
		}
	}
	// Only the hash is stored.
	var stored string
	if err := s.read.QueryRow(`SELECT token_hash FROM browser_sessions`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("cookie-value"))
	if stored != hex.EncodeToString(sum[:]) {
		t.Errorf("stored %q, not the SHA-256 of the cookie", stored)
	}
}

// ChannelID follows the rule of the spec (channels.md): SHA-256 over
// Chopin's namespace, the repository node ID, a zero byte and the key,
// shaped as a version-5 UUID.
func TestChannelIDKnownValue(t *testing.T) {
	const node, key = "R_kgDOH1", "5f0e2d7c-1111-4222-8333-944455556666"
	ns, _ := hex.DecodeString("6f0c1f1e8d8b4a4c9b3e3c1d0f6a2b7e")
	sum := sha256.Sum256(append(append(ns, node+"\x00"...), key...))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	want := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	if want != "abb5594f-efe9-5aa2-a3d0-c55296a940e7" {
		t.Fatalf("the rule gives %s", want)
	}
	if got := ChannelID(node, key); got != want {
		t.Errorf("ChannelID(%q, %q) = %s, want %s", node, key, got, want)
	}
}

// A listing whose last page is full ends there: no extra empty page.
func TestListChannelsEndsOnAFullPage(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	r := mustRepo(t, s, "o/r")
	for i := range 14 {
		mustChannel(t, s, r.NodeID, fmt.Sprintf("Plan %d", i))
	}
	var sizes []int
	for cur, more := "", true; more; {
		page, err := s.ListChannels(ctx, r.NodeID, ListOptions{Limit: 7, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Channels))
		cur, more = page.NextCursor, page.NextCursor != ""
		if len(sizes) > 5 {
			break
		}
	}
	if !slices.Equal(sizes, []int{7, 7}) {
		t.Errorf("pages of %v, want [7 7]", sizes)
	}
}
