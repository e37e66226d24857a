package room

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// changesetMapFixtures is room/testdata/changeset-map.json, written by
// ui/scripts/changeset-fixtures.mjs from what @codemirror/state's
// ChangeSet.map and ChangeSet.compose really return. Every change set is
// JSON.stringify(changes.toJSON()).
type changesetMapFixtures struct {
	CodemirrorState string `json:"codemirrorState"`
	Map             []struct {
		Name string `json:"name"`
		Doc  string `json:"doc"` // a and b both apply to it
		A    string `json:"a"`
		B    string `json:"b"`
		// x.map(y, before) for both directions and both values of before.
		AOverB       string `json:"aOverB"`
		AOverBBefore string `json:"aOverBBefore"`
		BOverA       string `json:"bOverA"`
		BOverABefore string `json:"bOverABefore"`
		Output       string `json:"output"` // a.compose(b.map(a)).apply(doc)
	} `json:"map"`
	Compose []struct {
		Name   string `json:"name"`
		Doc    string `json:"doc"` // a applies to it, b to a's result
		A      string `json:"a"`
		B      string `json:"b"`
		Result string `json:"result"` // a.compose(b)
		Output string `json:"output"` // a.compose(b).apply(doc)
	} `json:"compose"`
	Mismatched []struct {
		Op    string `json:"op"` // "map" or "compose"
		A     string `json:"a"`
		B     string `json:"b"`
		Error string `json:"error"`
	} `json:"mismatched"`
}

func loadChangesetMapFixtures(t testing.TB) changesetMapFixtures {
	t.Helper()
	data, err := os.ReadFile("testdata/changeset-map.json")
	if err != nil {
		t.Fatal(err)
	}
	var f changesetMapFixtures
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	// Guard against a truncated or mis-generated file passing vacuously.
	if len(f.Map) < 400 || len(f.Compose) < 400 || len(f.Mismatched) == 0 {
		t.Fatalf("changeset-map.json holds too few fixtures: %d map, %d compose, %d mismatched",
			len(f.Map), len(f.Compose), len(f.Mismatched))
	}
	return f
}

func TestChangeSetMapFixtures(t *testing.T) {
	f := loadChangesetMapFixtures(t)
	t.Logf("fixtures from @codemirror/state %s", f.CodemirrorState)
	for _, fx := range f.Map {
		t.Run(fx.Name, func(t *testing.T) {
			a, b := mustParseChangeSet(t, fx.A), mustParseChangeSet(t, fx.B)
			for _, tt := range []struct {
				x, y   ChangeSet
				before bool
				call   string
				want   string
			}{
				{a, b, false, "a.Map(b, false)", fx.AOverB},
				{a, b, true, "a.Map(b, true)", fx.AOverBBefore},
				{b, a, false, "b.Map(a, false)", fx.BOverA},
				{b, a, true, "b.Map(a, true)", fx.BOverABefore},
			} {
				got, err := tt.x.Map(tt.y, tt.before)
				if err != nil {
					t.Fatalf("%s with a = %s, b = %s: %v", tt.call, fx.A, fx.B, err)
				}
				if js := mustMarshalChangeSet(t, got); js != tt.want {
					t.Errorf("%s with a = %s, b = %s\n got %s\nwant %s", tt.call, fx.A, fx.B, js, tt.want)
				}
			}
			// And the result does what it is for: both orders reach
			// CodeMirror's text.
			viaA := mustCompose(t, a, mustMap(t, b, a, false))
			viaB := mustCompose(t, b, mustMap(t, a, b, true))
			for _, c := range []ChangeSet{viaA, viaB} {
				if got, err := c.Apply(fx.Doc); err != nil || got != fx.Output {
					t.Errorf("applying %s to %q = %q, %v; CodeMirror has %q", mustMarshalChangeSet(t, c), fx.Doc, got, err, fx.Output)
				}
			}
		})
	}
}

func TestChangeSetComposeFixtures(t *testing.T) {
	f := loadChangesetMapFixtures(t)
	for _, fx := range f.Compose {
		t.Run(fx.Name, func(t *testing.T) {
			a, b := mustParseChangeSet(t, fx.A), mustParseChangeSet(t, fx.B)
			got, err := a.Compose(b)
			if err != nil {
				t.Fatalf("%s.Compose(%s): %v", fx.A, fx.B, err)
			}
			if js := mustMarshalChangeSet(t, got); js != fx.Result {
				t.Errorf("%s.Compose(%s)\n got %s\nwant %s", fx.A, fx.B, js, fx.Result)
			}
			if got.LenBase() != a.LenBase() || got.LenAfter() != b.LenAfter() {
				t.Errorf("composed lengths %d -> %d, want %d -> %d", got.LenBase(), got.LenAfter(), a.LenBase(), b.LenAfter())
			}
			if out, err := got.Apply(fx.Doc); err != nil || out != fx.Output {
				t.Errorf("applying the composition to %q = %q, %v; CodeMirror has %q", fx.Doc, out, err, fx.Output)
			}
		})
	}
}

func TestChangeSetMapFixturesMismatched(t *testing.T) {
	for _, fx := range loadChangesetMapFixtures(t).Mismatched {
		a, b := mustParseChangeSet(t, fx.A), mustParseChangeSet(t, fx.B)
		var err error
		if fx.Op == "map" {
			_, err = a.Map(b, false)
		} else {
			_, err = a.Compose(b)
		}
		if !errors.Is(err, ErrMismatchedLengths) || !strings.HasPrefix(err.Error(), strings.ToLower(fx.Error[:1])+fx.Error[1:]) {
			t.Errorf("%s %s %s = %v, CodeMirror throws %q", fx.A, fx.Op, fx.B, err, fx.Error)
		}
	}
}

// Where CodeMirror skips the length check (an empty set on either side), Go
// does not.
func TestChangeSetMapComposeCheckLengths(t *testing.T) {
	for _, tt := range []struct {
		op, a, b string
	}{
		{"compose", `[3]`, `[2,[0,"x"]]`},
		{"compose", `[1,[0,"x"]]`, `[5]`},
		{"compose", `[]`, `[[0,"x"],1]`},
		{"map", `[1,[0,"x"]]`, `[2]`},
		{"map", `[3]`, `[1,[1]]`},
	} {
		a, b := mustParseChangeSet(t, tt.a), mustParseChangeSet(t, tt.b)
		var err error
		if tt.op == "map" {
			_, err = a.Map(b, false)
		} else {
			_, err = a.Compose(b)
		}
		if !errors.Is(err, ErrMismatchedLengths) {
			t.Errorf("%s %s %s = %v, want ErrMismatchedLengths", tt.a, tt.op, tt.b, err)
		}
	}
}

// A change set that cuts a character another one inserted cannot be held in
// a Go string; CodeMirror would produce half a surrogate pair.
func TestChangeSetComposeSplitSurrogate(t *testing.T) {
	a := mustParseChangeSet(t, `[1,[0,"😀"],1]`)
	b := mustParseChangeSet(t, `[2,[1],1]`)
	if _, err := a.Compose(b); !errors.Is(err, ErrSplitSurrogate) {
		t.Errorf("compose cutting an inserted emoji = %v, want ErrSplitSurrogate", err)
	}
}

// The fixtures pin single steps; this drives the two together the way a
// collaborative session does, with the convergence rule as the oracle: for
// A and B made on one text, A then B-over-A and B then A-over-B agree, and
// composing step by step agrees with applying step by step.
func TestChangeSetMapComposeProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 3000 {
		doc := randomDiffText(r, 10)
		a, b := randomEdit(r, doc), randomEdit(r, doc)
		for _, before := range []bool{false, true} {
			viaA := mustCompose(t, a, mustMap(t, b, a, before))
			viaB := mustCompose(t, b, mustMap(t, a, b, !before))
			outA, errA := viaA.Apply(doc)
			outB, errB := viaB.Apply(doc)
			if errA != nil || errB != nil || outA != outB {
				t.Fatalf("doc %q, a %s, b %s, before %v: %q (%v) and %q (%v)", doc,
					mustMarshalChangeSet(t, a), mustMarshalChangeSet(t, b), before, outA, errA, outB, errB)
			}
			mid, _ := a.Apply(doc)
			want, _ := mustMap(t, b, a, before).Apply(mid)
			if outA != want {
				t.Fatalf("doc %q, a %s, b %s: composed %q, stepwise %q", doc,
					mustMarshalChangeSet(t, a), mustMarshalChangeSet(t, b), outA, want)
			}
		}
	}
}

// randomEdit is a replacement of one run of doc by random text, as a change
// set built through DiffChangeSet (so it never splits a character).
func randomEdit(r *rand.Rand, doc string) ChangeSet {
	runes := []rune(doc)
	from := r.IntN(len(runes) + 1)
	to := from + r.IntN(len(runes)-from+1)
	after := string(runes[:from]) + randomDiffText(r, 3) + string(runes[to:])
	return DiffChangeSet(doc, NormalizeLineEndings(after))
}

func mustMap(t testing.TB, c, other ChangeSet, before bool) ChangeSet {
	t.Helper()
	m, err := c.Map(other, before)
	if err != nil {
		t.Fatalf("%s.Map(%s, %v): %v", mustMarshalChangeSet(t, c), mustMarshalChangeSet(t, other), before, err)
	}
	return m
}

func mustCompose(t testing.TB, c, other ChangeSet) ChangeSet {
	t.Helper()
	m, err := c.Compose(other)
	if err != nil {
		t.Fatalf("%s.Compose(%s): %v", mustMarshalChangeSet(t, c), mustMarshalChangeSet(t, other), err)
	}
	return m
}
