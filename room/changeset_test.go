package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// changesetFixtures is room/testdata/changesets.json, written by
// ui/scripts/changeset-fixtures.mjs from what @codemirror/state really does.
type changesetFixtures struct {
	CodemirrorState string `json:"codemirrorState"`
	Apply           []struct {
		Name  string `json:"name"`
		Raw   string `json:"raw"` // as typed or imported, any line endings
		Doc   string `json:"doc"` // Text.of(raw.split(/\r\n?|\n/)).toString()
		Steps []struct {
			Changes   string `json:"changes"` // JSON.stringify(changes.toJSON())
			Length    int    `json:"length"`
			NewLength int    `json:"newLength"`
			Output    string `json:"output"` // changes.apply(doc).toString()
		} `json:"steps"`
	} `json:"apply"`
	Diff []struct {
		Before  string `json:"before"`
		After   string `json:"after"`
		Changes string `json:"changes"`
	} `json:"diff"`
	WrongLength []struct {
		Doc     string `json:"doc"`
		Changes string `json:"changes"`
		Error   string `json:"error"`
	} `json:"wrongLength"`
	Invalid []string `json:"invalid"`
}

func loadChangesetFixtures(t testing.TB) changesetFixtures {
	t.Helper()
	data, err := os.ReadFile("testdata/changesets.json")
	if err != nil {
		t.Fatal(err)
	}
	var f changesetFixtures
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	// Guard against a truncated or mis-generated file passing vacuously.
	if len(f.Apply) < 300 || len(f.Diff) < 50 || len(f.WrongLength) == 0 || len(f.Invalid) == 0 {
		t.Fatalf("changesets.json holds too few fixtures: %d apply, %d diff, %d wrong length, %d invalid",
			len(f.Apply), len(f.Diff), len(f.WrongLength), len(f.Invalid))
	}
	return f
}

func mustParseChangeSet(t testing.TB, js string) ChangeSet {
	t.Helper()
	c, err := ParseChangeSet([]byte(js))
	if err != nil {
		t.Fatalf("ParseChangeSet(%s): %v", js, err)
	}
	return c
}

func mustMarshalChangeSet(t testing.TB, c ChangeSet) string {
	t.Helper()
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChangeSetFixtures(t *testing.T) {
	f := loadChangesetFixtures(t)
	t.Logf("fixtures from @codemirror/state %s", f.CodemirrorState)
	for _, fx := range f.Apply {
		t.Run(fx.Name, func(t *testing.T) {
			if got := NormalizeLineEndings(fx.Raw); got != fx.Doc {
				t.Fatalf("NormalizeLineEndings(%q) = %q, CodeMirror has %q", fx.Raw, got, fx.Doc)
			}
			doc := fx.Doc
			for i, step := range fx.Steps {
				c := mustParseChangeSet(t, step.Changes)
				if got := mustMarshalChangeSet(t, c); got != step.Changes {
					t.Errorf("step %d: MarshalJSON = %s, CodeMirror wrote %s", i, got, step.Changes)
				}
				if c.LenBase() != step.Length || c.LenAfter() != step.NewLength {
					t.Errorf("step %d: lengths %d -> %d, CodeMirror has %d -> %d",
						i, c.LenBase(), c.LenAfter(), step.Length, step.NewLength)
				}
				if n := UTF16Len(doc); n != step.Length {
					t.Errorf("step %d: UTF16Len(doc) = %d, CodeMirror counts %d", i, n, step.Length)
				}
				got, err := c.Apply(doc)
				if err != nil {
					t.Fatalf("step %d: Apply(%q, %s): %v", i, doc, step.Changes, err)
				}
				if got != step.Output {
					t.Fatalf("step %d: Apply(%q, %s)\n got %q\nwant %q", i, doc, step.Changes, got, step.Output)
				}
				doc = got
			}
		})
	}
}

// TestDiffChangeSetFixtures: one replacement between the common prefix and
// suffix, the coarsest change the server writes (what a stretch past
// DiffChangeSet's bounds becomes), is written byte for byte as
// CodeMirror's ChangeSet.of writes the same edit: it accepts the server's
// sections, and applying them gives After. DiffChangeSet's own output
// applies as the fixtures' Apply steps do.
func TestDiffChangeSetFixtures(t *testing.T) {
	for _, fx := range loadChangesetFixtures(t).Diff {
		c := oneSpanChangeSet(fx.Before, fx.After)
		if got := mustMarshalChangeSet(t, c); got != fx.Changes {
			t.Errorf("oneSpanChangeSet(%q, %q) = %s, want %s", fx.Before, fx.After, got, fx.Changes)
		}
		for _, c := range []ChangeSet{c, DiffChangeSet(fx.Before, fx.After)} {
			if got, err := c.Apply(fx.Before); err != nil || got != fx.After {
				t.Errorf("%s.Apply(%q) = %q, %v; want %q", mustMarshalChangeSet(t, c), fx.Before, got, err, fx.After)
			}
		}
	}
}

func TestChangeSetFixturesWrongLength(t *testing.T) {
	for _, fx := range loadChangesetFixtures(t).WrongLength {
		_, err := mustParseChangeSet(t, fx.Changes).Apply(fx.Doc)
		if !errors.Is(err, ErrWrongDocLength) || !strings.HasPrefix(err.Error(), strings.ToLower(fx.Error[:1])+fx.Error[1:]) {
			t.Errorf("Apply(%q, %s) = %v, CodeMirror throws %q", fx.Doc, fx.Changes, err, fx.Error)
		}
	}
}

func TestChangeSetFixturesInvalid(t *testing.T) {
	for _, js := range loadChangesetFixtures(t).Invalid {
		if _, err := ParseChangeSet([]byte(js)); !errors.Is(err, ErrInvalidChangeSet) {
			t.Errorf("ParseChangeSet(%s) = %v, want ErrInvalidChangeSet like CodeMirror's fromJSON", js, err)
		}
	}
}

// JSON that CodeMirror's fromJSON accepts in a form its toJSON never writes.
func TestParseChangeSetNormalises(t *testing.T) {
	for _, tt := range []struct{ in, out string }{
		{`[]`, `[]`},
		{` [ 1 , [ 2 , "a" ] , [3] ] `, `[1,[2,"a"],[3]]`},
		{`[1e3]`, `[1000]`},
		{`[2.0]`, `[2]`},
		{`[-0]`, `[0]`},
		{`[1,2,0]`, `[1,2,0]`},                       // adjacent sections are not merged, as in fromJSON
		{`[[0,""]]`, `[[0]]`},                        // an empty insertion is a deletion
		{`[[0,"",""]]`, `[[0,"",""]]`},               // one line break
		{`[[0,"\ud83d\ude00\u00e9"]]`, `[[0,"😀é"]]`}, // escaped pair
		{`[[0,"\u003c\u2028\u0001\t"]]`, "[[0,\"<\u2028\\u0001\\t\"]]"}, // JSON.stringify's escaping
	} {
		if got := mustMarshalChangeSet(t, mustParseChangeSet(t, tt.in)); got != tt.out {
			t.Errorf("ParseChangeSet(%s) marshals to %s, want %s", tt.in, got, tt.out)
		}
	}
}

func TestParseChangeSetErrors(t *testing.T) {
	for _, tt := range []struct{ in, msg string }{
		{``, "unexpected end of JSON input"},
		{`[1,]`, "invalid character"},
		{`[1] 2`, "invalid character"},
		{`null`, "not an array"},
		{`[null]`, "section 0: null is not a length"},
		{`[1,"2"]`, `section 1: "2" is not a length`},
		{`[[]]`, "section 0: empty array"},
		{`[[1,2]]`, "section 0: inserted line 0 is not a string"},
		{`[[1,"a",null]]`, "section 0: inserted line 1 is not a string"},
		// Accepted by fromJSON, refused here.
		{`[-1]`, "section 0: negative length -1"},
		{`[[-2,"a"]]`, "section 0: negative length -2"},
		{`[1.5]`, "section 0: length 1.5 is not an integer"},
		{`[1e10]`, "section 0: length 1e10 is too large"},
		{`[2147483647,1]`, "longer than 2147483647 code units"},
		{`[[0,"a\nb"]]`, "section 0: inserted line 0 contains a line break"},
		{`[[0,"a","\r"]]`, "section 0: inserted line 1 contains a line break"},
		{`[[0,"\ud83d"]]`, "section 0: inserted line 0 holds half a surrogate pair"},
		{`[[0,"\ude00x"]]`, "section 0: inserted line 0 holds half a surrogate pair"},
		{`[[0,"\uD83D\u0041"]]`, "section 0: inserted line 0 holds half a surrogate pair"},
		{`[[0,"x\\ud83d"], [0, "\ud83dx"]]`, "section 1: inserted line 0 holds half a surrogate pair"},
	} {
		_, err := ParseChangeSet([]byte(tt.in))
		if !errors.Is(err, ErrInvalidChangeSet) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseChangeSet(%s) = %v, want ErrInvalidChangeSet with %q", tt.in, err, tt.msg)
		}
	}
}

func TestChangeSetApplyErrors(t *testing.T) {
	for _, tt := range []struct {
		doc, changes string
		err          error
		msg          string
	}{
		{"abc", `[2]`, ErrWrongDocLength, "the change set is for 2 UTF-16 code units, the document has 3"},
		{"ab", `[3]`, ErrWrongDocLength, "the change set is for 3 UTF-16 code units, the document has 2"},
		{"😀", `[1]`, ErrWrongDocLength, "the document has 2"},
		{"", `[[0,"x"],1]`, ErrWrongDocLength, "the document has 0"},
		{"a😀", `[2,[1]]`, ErrSplitSurrogate, "at offset 2"},   // start of a change
		{"a😀", `[1,[1],1]`, ErrSplitSurrogate, "at offset 2"}, // end of a change
		{"😀😀", `[3,[0,"x"],1]`, ErrSplitSurrogate, "at offset 3"},
		{"😀", `[3]`, ErrWrongDocLength, "the document has 2"}, // length is checked first, as in CodeMirror
		{"a\xffb", `[1,[1,"x"],1]`, ErrInvalidUTF8, "byte 1"},
	} {
		_, err := mustParseChangeSet(t, tt.changes).Apply(tt.doc)
		if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Apply(%q, %s) = %v, want %v with %q", tt.doc, tt.changes, err, tt.err, tt.msg)
		}
	}
}

func TestChangeSetZeroValue(t *testing.T) {
	var c ChangeSet
	if got := mustMarshalChangeSet(t, c); got != "[]" {
		t.Errorf("zero ChangeSet marshals to %s, want []", got)
	}
	if got, err := c.Apply(""); got != "" || err != nil {
		t.Errorf("zero ChangeSet.Apply(\"\") = %q, %v", got, err)
	}
}

// A ChangeSet is a field of the room's push message.
func TestChangeSetInMessage(t *testing.T) {
	var msg struct {
		Version int       `json:"version"`
		Changes ChangeSet `json:"changes"`
	}
	if err := json.Unmarshal([]byte(`{"version":7,"changes":[2,[0,"<b>"]]}`), &msg); err != nil {
		t.Fatal(err)
	}
	if got, err := msg.Changes.Apply("hi"); got != "hi<b>" || err != nil {
		t.Errorf("Apply = %q, %v", got, err)
	}
	if err := json.Unmarshal([]byte(`{"changes":[-1]}`), &msg); !errors.Is(err, ErrInvalidChangeSet) {
		t.Errorf("bad changes in a message: %v", err)
	}
}

func TestChangeSetNormalizeLineEndings(t *testing.T) {
	for _, tt := range []struct{ in, out string }{
		{"", ""},
		{"a\nb", "a\nb"},
		{"a\r\nb", "a\nb"},
		{"a\rb", "a\nb"},
		{"\r\r\n\n\r", "\n\n\n\n"},
		{"\n\r", "\n\n"},
	} {
		if got := NormalizeLineEndings(tt.in); got != tt.out {
			t.Errorf("NormalizeLineEndings(%q) = %q, want %q", tt.in, got, tt.out)
		}
	}
}

func TestChangeSetUTF16Len(t *testing.T) {
	for _, tt := range []struct {
		s string
		n int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"e\u0301", 2},
		{"漢字", 2},
		{"😀", 2},
		{"𠜎", 2},
		{"👩‍👩‍👧", 8},
		{"a\xffb", 3}, // as encoding/json would send it: U+FFFD
	} {
		if got := UTF16Len(tt.s); got != tt.n {
			t.Errorf("UTF16Len(%q) = %d, want %d", tt.s, got, tt.n)
		}
	}
}

// randomDiffText draws from characters that differ in UTF-8 and UTF-16 width and
// share leading bytes (é and è, 😀 and 😁), where a diff is easiest to get wrong.
func randomDiffText(r *rand.Rand, maxRunes int) string {
	alphabet := []rune("ab \n<é\u00e8\u0301漢😀😁𠜎\u200d👩\u2028")
	var b strings.Builder
	for n := r.IntN(maxRunes + 1); n > 0; n-- {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestDiffChangeSetProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		a := randomDiffText(r, 12)
		b := randomDiffText(r, 12)
		if i%2 == 0 { // mostly similar texts, as when the server edits a plan
			ra := []rune(a)
			from := r.IntN(len(ra) + 1)
			to := min(len(ra), from+r.IntN(3))
			b = string(ra[:from]) + b + string(ra[to:])
		}
		checkDiff(t, a, b, DiffChangeSet(a, b))
		c := oneSpanChangeSet(a, b)
		js := checkDiff(t, a, b, c)
		// oneSpanChangeSet is minimal: one replacement, and its two sides
		// neither start nor end with the same character, or the prefix or
		// suffix could be longer.
		var removed, inserted string
		pos, changes := 0, 0
		for _, s := range c.sections {
			if !s.kept {
				changes++
				removed, inserted = utf16Substring(a, pos, pos+s.len), s.insert
			}
			pos += s.len
		}
		if changes > 1 || a != b && changes == 0 {
			t.Fatalf("oneSpanChangeSet(%q, %q) = %s: %d replacements", a, b, js, changes)
		}
		if removed != "" && inserted != "" {
			r1, _ := utf8.DecodeRuneInString(removed)
			r2, _ := utf8.DecodeRuneInString(inserted)
			e1, _ := utf8.DecodeLastRuneInString(removed)
			e2, _ := utf8.DecodeLastRuneInString(inserted)
			if r1 == r2 || e1 == e2 {
				t.Fatalf("oneSpanChangeSet(%q, %q) = %s is not minimal", a, b, js)
			}
		}
	}
}

// checkDiff checks that c, made by comparing a and b, turns a into b and
// is well formed: its lengths right, every change changes something, no
// two kept runs side by side, and its JSON reads back as itself.
func checkDiff(t testing.TB, a, b string, c ChangeSet) string {
	t.Helper()
	js := mustMarshalChangeSet(t, c)
	if got, err := c.Apply(a); got != b || err != nil {
		t.Fatalf("%s.Apply(%q) = %q, %v; want %q", js, a, got, err, b)
	}
	if c.LenBase() != UTF16Len(a) || c.LenAfter() != UTF16Len(b) {
		t.Fatalf("%s for %q to %q: lengths %d -> %d", js, a, b, c.LenBase(), c.LenAfter())
	}
	for i, s := range c.sections {
		if !s.kept && s.len == 0 && s.insert == "" || s.kept && (s.len == 0 || i > 0 && c.sections[i-1].kept) {
			t.Fatalf("%s for %q to %q: section %d is empty or follows a kept run", js, a, b, i)
		}
	}
	if back := mustMarshalChangeSet(t, mustParseChangeSet(t, js)); back != js {
		t.Fatalf("%s for %q to %q round-trips to %s", js, a, b, back)
	}
	return js
}

// utf16Substring is s[from:to] in UTF-16 units, for checking the diff's sections.
func utf16Substring(s string, from, to int) string {
	i, err := advance(s, 0, from)
	if err != nil {
		panic(err)
	}
	j, err := advance(s, i, to-from)
	if err != nil {
		panic(err)
	}
	return s[i:j]
}

// FuzzChangeSet: any change set the server takes applies as CodeMirror's
// does, and DiffChangeSet of the texts before and after it gives them back.
func FuzzChangeSet(f *testing.F) {
	fx := loadChangesetFixtures(f)
	for _, a := range fx.Apply[:40] {
		f.Add([]byte(a.Steps[0].Changes), a.Doc)
	}
	for _, js := range fx.Invalid {
		f.Add([]byte(js), "")
	}
	f.Add([]byte(`[1,[1,"\ud83d\ude00"],[0,"",""]]`), "a😀")
	f.Fuzz(func(t *testing.T, data []byte, doc string) {
		c, err := ParseChangeSet(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidChangeSet) {
				t.Fatalf("ParseChangeSet(%q) = %v, not ErrInvalidChangeSet", data, err)
			}
			return
		}
		js := mustMarshalChangeSet(t, c)
		if again := mustMarshalChangeSet(t, mustParseChangeSet(t, js)); again != js {
			t.Fatalf("%q marshals to %s, then to %s", data, js, again)
		}
		out, err := c.Apply(doc)
		switch {
		case err == nil:
			if !utf8.ValidString(out) || UTF16Len(out) != c.LenAfter() {
				t.Fatalf("Apply(%q, %s) = %q: %d units, LenAfter %d", doc, js, out, UTF16Len(out), c.LenAfter())
			}
			// What a push does: the length known, the span it touched.
			known, span, err := c.applyKnown(doc, UTF16Len(doc))
			if err != nil || known != out {
				t.Fatalf("applyKnown(%q, %s) = %q, %v; Apply gave %q", doc, js, known, err, out)
			}
			if span.From > span.OldEnd || span.From > span.NewEnd || doc[:span.From] != out[:span.From] || doc[span.OldEnd:] != out[span.NewEnd:] {
				t.Fatalf("applyKnown(%q, %s) = %q, changed in %+v", doc, js, out, span)
			}
			// What the server writes when it makes the same change itself:
			// a change set that turns doc into out, well formed, that
			// changes nothing outside the blocks the edit reached.
			d := DiffChangeSet(doc, out)
			dj := checkDiff(t, doc, out, d)
			lo, hi, _ := diffBounds(doc, out)
			for _, ch := range changesOf(doc, d) {
				if from := len(utf16Substring(doc, 0, ch.at)); from < lo || from+len(ch.removed) > hi {
					t.Fatalf("DiffChangeSet(%q, %q) = %s changes bytes %d-%d, outside the blocks %d-%d the edit %s reached",
						doc, out, dj, from, from+len(ch.removed), lo, hi, js)
				}
			}
		case !errors.Is(err, ErrWrongDocLength) && !errors.Is(err, ErrSplitSurrogate) && !errors.Is(err, ErrInvalidUTF8):
			t.Fatalf("Apply(%q, %s) = unexpected error %v", doc, js, err)
		}
	})
}

// benchDoc is a plan of about size bytes: mostly ASCII Markdown with some
// accents, CJK and emoji, so both paths of the scan are measured.
func benchChangeSetDoc(size int) string {
	const para = "## Step\n\nThe planner writes a plan, the person reviews it: café, 漢字, 👩‍👩‍👧 done.\n- item one\n- item two\n\n"
	return strings.Repeat(para, size/len(para)+1)[:size-size%len(para)]
}

// benchChanges replaces one ASCII character every stride code units.
func benchChangeSetEdits(doc string, stride int) ChangeSet {
	var parts []string
	last, unit := 0, 0
	for _, r := range doc {
		if r < utf8.RuneSelf && unit-last >= stride {
			parts = append(parts, fmt.Sprint(unit-last), `[1,"edit"]`)
			last = unit + 1
		}
		unit += utf16.RuneLen(r)
	}
	parts = append(parts, fmt.Sprint(unit-last))
	c, err := ParseChangeSet([]byte("[" + strings.Join(parts, ",") + "]"))
	if err != nil {
		panic(err)
	}
	return c
}

func BenchmarkChangeSetApply(b *testing.B) {
	for _, size := range []int{10_000, 256 << 10} {
		doc := benchChangeSetDoc(size)
		for _, shape := range []struct {
			name  string
			edits int
		}{{"keystroke", 1}, {"64edits", 64}} {
			c := benchChangeSetEdits(doc, UTF16Len(doc)/(shape.edits+1))
			b.Run(fmt.Sprintf("%dB/%s", len(doc), shape.name), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Apply(doc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// applyKnown, which trusts a known document length instead of scanning
// the text after the last change, gives what Apply gives, and refuses a
// document of another length as Apply does.
func TestApplyKnownAgreesWithApply(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 2))
	pieces := []string{"a", "bc", "\n", "é", "😀", "—", "plan "}
	random := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range 5000 {
		a, b := random(r.IntN(20)), random(r.IntN(20))
		if r.IntN(2) == 0 {
			b = a[:len(a)/2] + b + a[len(a)/2:]
		}
		cs := DiffChangeSet(a, b)
		got, span, err := cs.applyKnown(a, UTF16Len(a))
		if err != nil || got != b {
			t.Fatalf("case %d: applyKnown(%q) = %q, %v; want %q", i, a, got, err, b)
		}
		// The span covers every difference: the texts agree around it.
		if span.From > span.OldEnd || span.From > span.NewEnd || a[:span.From] != b[:span.From] || a[span.OldEnd:] != b[span.NewEnd:] {
			t.Fatalf("case %d: %q to %q changed in %+v", i, a, b, span)
		}
		if _, _, err := cs.applyKnown(a+"x", UTF16Len(a)+1); !errors.Is(err, ErrWrongDocLength) {
			t.Fatalf("case %d: a longer document: %v", i, err)
		}
	}
}
