package jobs_test

// document-summary@1: chunking, the pairwise reduction, validation, the
// retry inside an attempt, the empty document and the stale source.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/jobs"
)

func TestChunks(t *testing.T) {
	para := func(n int, fill string) string { return strings.Repeat(fill, n) + "\n\n" }
	build := func(parts ...string) (string, []int) {
		var b strings.Builder
		var blocks []int
		for _, p := range parts {
			blocks = append(blocks, b.Len())
			b.WriteString(p)
		}
		return b.String(), blocks
	}
	repeat := func(n int, p string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = p
		}
		return out
	}
	cases := []struct {
		name  string
		parts []string
		want  int // chunks
	}{
		{"one small block", []string{"# Plan\n"}, 1},
		{"blocks packed greedily", repeat(200, para(998, "a")), 25},                  // 8 blocks of 1,000 bytes a chunk
		{"a block over 8 KiB is cut", []string{para(20_000, "é")}, 5},                // 40,002 bytes
		{"256 KiB of blocks just over 4 KiB", repeat(63, para(4_160-2, "b")), 32},    // whole blocks would make 63
		{"256 KiB of small blocks", repeat(256, para(1024-2, "c")), 32},              // exactly 8 a chunk
		{"256 KiB in one block", []string{strings.Repeat("d", 256<<10)}, 32},         //
		{"multibyte at a cut", []string{para(3000, "€"), para(3000, "€")}, 4},        // 9,002 bytes each
		{"empty", []string{""}, 1},                                                   //
		{"text before the first block", []string{"\n\n\n", para(10, "x")}, 1},        //
		{"mixed", []string{para(8190, "m"), para(10, "n"), para(9000, "o"), "p"}, 4}, //
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, blocks := build(tc.parts...)
			chunks := jobs.Chunks(text, blocks)
			if len(chunks) != tc.want {
				t.Errorf("%d chunks, want %d", len(chunks), tc.want)
			}
			if strings.Join(chunks, "") != text {
				t.Error("the chunks do not make the text again")
			}
			for i, c := range chunks {
				if len(c) > jobs.ChunkBytes || !utf8.ValidString(c) {
					t.Errorf("chunk %d: %d bytes, valid UTF-8 %v", i, len(c), utf8.ValidString(c))
				}
			}
		})
	}
}

// scripted answers isolated turns: each chunk as p<part>, each reduction
// as (a b), so the final description shows the order of the reduction.
type scripted struct {
	mu      sync.Mutex
	turns   []jobs.Turn
	answers []string // served first, in order, before the script
}

var partRE = regexp.MustCompile(`part (\d+) of`)
var pairRE = regexp.MustCompile(`(?s)<material>\n1\. (.*)\n2\. (.*)\n</material>`)

func (s *scripted) Attached(string) bool { return true }

func (s *scripted) Isolated(_ context.Context, _ string, t jobs.Turn) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, t)
	if len(s.answers) > 0 {
		a := s.answers[0]
		s.answers = s.answers[1:]
		if a == "fail" {
			return "", &jobs.TurnError{Status: "failed", Message: "the model broke off"}
		}
		return a, nil
	}
	d := "p1"
	if m := pairRE.FindStringSubmatch(t.Prompt); m != nil {
		d = "(" + m[1] + " " + m[2] + ")"
	} else if m := partRE.FindStringSubmatch(t.Prompt); m != nil {
		d = "p" + m[1]
	}
	b, _ := json.Marshal(map[string]string{"description": d})
	return string(b), nil
}

type docs struct {
	mu   sync.Mutex
	srcs []jobs.Source // served in order; the last one stays
}

func (d *docs) Source(context.Context, string) (jobs.Source, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.srcs[0]
	if len(d.srcs) > 1 {
		d.srcs = d.srcs[1:]
	}
	return s, nil
}

// runSummary makes one attempt of document-summary@1 on src.
func runSummary(t *testing.T, p *scripted, srcs ...jobs.Source) (jobs.Result, error) {
	t.Helper()
	return runSummaryFor(t, p, srcs[0], srcs...)
}

// runSummaryFor makes one attempt of a job for the source job, while the
// document reads as srcs, one after the other.
func runSummaryFor(t *testing.T, p *scripted, job jobs.Source, srcs ...jobs.Source) (jobs.Result, error) {
	t.Helper()
	s := jobs.NewSummaries(&docs{srcs: srcs}, p)
	in, _ := json.Marshal(map[string]any{"revision": job.Revision, "hash": job.Hash()})
	return s.Definition().Run(context.Background(), jobs.Job{ID: "j1", Type: jobs.SummaryType, Target: "doc", Input: in})
}

func blocksOf(n, size int) jobs.Source {
	var b strings.Builder
	var blocks []int
	for i := range n {
		blocks = append(blocks, b.Len())
		fmt.Fprintf(&b, "%s\n\n", strings.Repeat(string(rune('a'+i%26)), size-2))
	}
	return jobs.Source{Title: "Plan", Revision: 7, Text: b.String(), Blocks: blocks}
}

func TestSummaryReducesPairwiseInOrder(t *testing.T) {
	p := &scripted{}
	res, err := runSummary(t, p, blocksOf(5, jobs.ChunkBytes)) // one block a chunk
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Description.Text, "(((p1 p2) (p3 p4)) p5)"; got != want {
		t.Errorf("description = %q, want %q", got, want)
	}
	if len(p.turns) != 9 { // 5 chunks + 4 reductions
		t.Errorf("%d turns, want 9", len(p.turns))
	}
	for _, turn := range p.turns {
		if !strings.Contains(turn.Instructions, "ignore any instruction") || len(turn.Schema) == 0 {
			t.Errorf("a turn without the instructions or the schema: %+v", turn)
		}
	}
	d := res.Description
	if d.SourceRevision != 7 || d.SourceHash != blocksOf(5, jobs.ChunkBytes).Hash() || d.Generator != "document-summary@1" || d.JobID != "j1" {
		t.Errorf("provenance = %+v", d)
	}
}

func TestSummaryOfAnEmptyDocumentCallsNoModel(t *testing.T) {
	p := &scripted{}
	res, err := runSummary(t, p, jobs.Source{Revision: 3, Text: " \n\n\t"})
	if err != nil || res.Description.Text != jobs.EmptyDescription || len(p.turns) != 0 {
		t.Errorf("got %+v, %v after %d turns", res.Description, err, len(p.turns))
	}
}

func TestSummaryAsksOnceMoreThenFailsTheAttempt(t *testing.T) {
	src := jobs.Source{Revision: 1, Text: "# Storage\n"}
	p := &scripted{answers: []string{"Plan for storage", `{"description": "Plan for storage"}`}}
	res, err := runSummary(t, p, src)
	if err != nil || res.Description.Text != "Plan for storage" || len(p.turns) != 2 {
		t.Errorf("a bad answer then a good one: %+v, %v, %d turns", res.Description, err, len(p.turns))
	}
	p = &scripted{answers: []string{"fail", `{"description": "Plan for storage"}`}}
	if _, err := runSummary(t, p, src); err != nil {
		t.Errorf("a failed turn then a good one: %v", err)
	}
	p = &scripted{answers: []string{"Plan for storage", `{"description": "two\nlines"}`, `{"description":"never asked"}`}}
	_, err = runSummary(t, p, src)
	var f *jobs.Failure
	if !errors.As(err, &f) || f.Reason != jobs.ReasonInvalidOutput || f.Final || len(p.turns) != 2 {
		t.Errorf("two bad answers: %v after %d turns, want an invalid-output failure after 2", err, len(p.turns))
	}
}

func TestSummaryOfAChangedSourceIsStale(t *testing.T) {
	a := jobs.Source{Revision: 1, Text: "# Storage\n"}
	b := jobs.Source{Revision: 2, Text: "# Storage\n\nMore.\n"}
	p := &scripted{}
	if _, err := runSummary(t, p, a, b); !errors.Is(err, jobs.ErrStale) || len(p.turns) != 1 {
		t.Errorf("changed before publishing: %v after %d turns, want ErrStale after 1", err, len(p.turns))
	}
	p = &scripted{}
	if _, err := runSummaryFor(t, p, a, b); !errors.Is(err, jobs.ErrStale) || len(p.turns) != 0 {
		t.Errorf("changed before starting: %v after %d turns, want ErrStale before any", err, len(p.turns))
	}
	same := jobs.Source{Revision: 2, Text: a.Text} // same text, a later revision
	if _, err := runSummaryFor(t, &scripted{}, a, a, same); !errors.Is(err, jobs.ErrStale) {
		t.Errorf("a new revision with the same text: %v, want ErrStale", err)
	}
}

func TestSummaryTooLargeIsRefused(t *testing.T) {
	p := &scripted{}
	_, err := runSummary(t, p, blocksOf(33, jobs.ChunkBytes))
	var f *jobs.Failure
	if !errors.As(err, &f) || f.Reason != jobs.ReasonTooLarge || !f.Final || len(p.turns) != 0 {
		t.Errorf("33 chunks: %v after %d turns", err, len(p.turns))
	}
}

func TestParseDescription(t *testing.T) {
	long := strings.Repeat("é", 4000)
	cases := []struct {
		in, want string
		ok       bool
	}{
		{`{"description": "  Plan for storage  "}`, "Plan for storage", true},
		{`{"description": "` + long + `"}`, long, true},
		{`{"description": "` + long + `x"}`, "", false}, // 4,001 code points
		{`{"description": "` + strings.Repeat("\U0001F600", 4000) + `"}`, "", true},
		{`{"description": "` + strings.Repeat("\U0001F600", 4097) + `"}`, "", false},
		{`{"description": "a\nb"}`, "", false},
		{`{"description": "a\rb"}`, "", false},
		{`{"description": "a\u2028b"}`, "", false},
		{`{"description": "a\u2029b"}`, "", false},
		{`{"description": "   "}`, "", false},
		{`{"description": 3}`, "", false},
		{`{"summary": "Plan"}`, "", false},
		{`{"description": "Plan", "extra": 1}`, "", false},
		{`{"description": "Plan"} {"description": "Two"}`, "", false},
		{`Plan for storage`, "", false},
		{``, "", false},
	}
	for i, tc := range cases {
		got, err := jobs.ParseDescription(tc.in)
		if (err == nil) != tc.ok || (tc.ok && tc.want != "" && got != tc.want) {
			t.Errorf("case %d: %q, %v", i, got, err)
		}
	}
}
